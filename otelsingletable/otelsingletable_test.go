package otelsingletable_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/otelsingletable"
)

type Note struct {
	Board, ID, Author, Text string
}

var Notes = singletable.MustDefine(singletable.Schema[Note]{
	Type: "Note", PK: "BOARD#{Board}", SK: "NOTE#{ID}",
	Indexes: []singletable.IndexSchema[Note]{{Name: "GSI1", PK: "AUTHOR#{Author}", SK: "NOTE#{ID}"}},
})

// TestSpansAndMetrics: against DynamoDB Local, with the SDK's in-memory
// span recorder and a manual metric reader, every request is a span named
// by its access pattern, and the capacity metric sums, per pattern and
// place, to what the observations reported.
func TestSpansAndMetrics(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	h, err := otelsingletable.New(tp, mp)
	require.NoError(t, err)

	raw := ddblocal.Shared(t).Client()
	capacity := map[string]float64{} // pattern/index → units, as observed
	tbl := singletable.NewTable(raw, ddblocal.TableName(t), func(o *singletable.TableOptions) {
		o.Observe = func(ctx context.Context, ob *singletable.Observation) {
			for ix, u := range ob.IndexUnits() {
				capacity[ob.Pattern+"/"+ix] += u
			}
			h.Observe(ctx, ob)
		}
	})
	notes := singletable.MustBind(tbl, Notes)
	ctx := context.Background()
	require.NoError(t, tbl.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, raw, tbl.Name())
	setup := len(spans.Ended())

	parent, root := tp.Tracer("test").Start(ctx, "handler")
	for i := range 5 {
		_, err := notes.Create(singletable.WithPattern(parent, "AP1"), Note{Board: "b", ID: fmt.Sprint(i), Author: "x", Text: "private text"})
		require.NoError(t, err)
	}
	got, err := notes.QueryIndex("GSI1", Note{Author: "x"}).Collect(singletable.WithPattern(parent, "AP2"))
	require.NoError(t, err)
	require.Len(t, got, 5)
	root.End()

	ended := spans.Ended()[setup:]
	names := map[string]int{}
	for _, s := range ended {
		names[s.Name()]++
		if s.Name() == "handler" {
			continue
		}
		require.Equal(t, root.SpanContext().SpanID(), s.Parent().SpanID(), "a child of the caller's span")
		attrs := attribute.NewSet(s.Attributes()...)
		v, ok := attrs.Value("aws.dynamodb.consumed_capacity")
		require.True(t, ok)
		require.Positive(t, v.AsFloat64())
		for _, kv := range s.Attributes() {
			require.NotContains(t, kv.Value.Emit(), "private text", "no item value in %s", kv.Key)
		}
		if s.Name() == "AP2 Query" {
			idx, _ := attrs.Value("aws.dynamodb.index_name")
			require.Equal(t, "GSI1", idx.AsString())
			n, _ := attrs.Value("singletable.items.returned")
			require.Equal(t, int64(5), n.AsInt64())
		}
		require.False(t, s.StartTime().After(s.EndTime()))
	}
	require.Equal(t, 5, names["AP1 PutItem"])
	require.Equal(t, 1, names["AP2 Query"])

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	measured := map[string]float64{}
	var durations uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "singletable.consumed_capacity":
				for _, dp := range m.Data.(metricdata.Sum[float64]).DataPoints {
					p, _ := dp.Attributes.Value("singletable.pattern")
					ix, _ := dp.Attributes.Value("aws.dynamodb.index_name")
					measured[p.AsString()+"/"+ix.AsString()] += dp.Value
				}
			case "singletable.request.duration":
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					durations += dp.Count
				}
			}
		}
	}
	require.Equal(t, capacity, measured)
	require.Equal(t, 5.0, measured["AP1/"], "five small items, one write unit each")
	require.Equal(t, 5.0, measured["AP1/GSI1"])
	require.Equal(t, uint64(len(spans.Ended())-1), durations, "one duration per request (table creation included)")
}
