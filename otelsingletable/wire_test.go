package otelsingletable_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/wiretest"
	"github.com/singletable-go/singletable/internal/wiretest/sdkwrites"
	"github.com/singletable-go/singletable/otelsingletable"
	"github.com/singletable-go/singletable/wire"
)

// TestSpansWithTheWirePath: with the direct wire path on (a client built
// with wire.Enable), a table reporting to OpenTelemetry through the hook
// takes the path (wiretest.Paths counts the responses it decoded,
// sdkwrites.Counter the requests the SDK wrote instead of the path), and
// gives every request the same span, name and attributes (but for time)
// as on a plain client: the path never costs a span its items returned,
// scanned or capacity. Put, BatchWrite, Query pages, an index Query, a
// Scan, Get, BatchGet, TxGet and a collection page.
func TestSpansWithTheWirePath(t *testing.T) {
	ctx := context.Background()
	var paths wiretest.Paths
	var written sdkwrites.Counter
	plain := ddblocal.Shared(t).Client()
	direct := ddblocal.Shared(t).Client(wire.Enable, paths.Option, written.Option)
	name := ddblocal.TableName(t)
	setup := singletable.NewTable(plain, name)
	notes := singletable.MustBind(setup, Notes)
	require.NoError(t, setup.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, plain, name)
	for i := range 6 {
		_, err := notes.Create(ctx, Note{Board: "b", ID: fmt.Sprint(i), Author: "x", Text: "t"})
		require.NoError(t, err)
	}

	spansOf := func(c singletable.Client) []string {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		h, err := otelsingletable.New(tp, sdkmetric.NewMeterProvider())
		require.NoError(t, err)
		tbl := singletable.NewTable(c, name, func(o *singletable.TableOptions) {
			o.Observe = h.Observe
			o.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
		})
		notes := singletable.MustBind(tbl, Notes)
		// The same writes each time, first, so that every time reads the same.
		_, err = notes.Put(singletable.WithPattern(ctx, "AP4"), Note{Board: "c", ID: "1", Author: "y", Text: "t"})
		require.NoError(t, err)
		require.NoError(t, singletable.BatchWrite(singletable.WithPattern(ctx, "AP5"), []singletable.WriteOp{
			notes.PutOp(Note{Board: "c", ID: "2", Author: "y"}), notes.PutOp(Note{Board: "c", ID: "3", Author: "y"})}))
		p, err := notes.Query(Note{Board: "b"}).Limit(4).Page(singletable.WithPattern(ctx, "AP1"))
		require.NoError(t, err)
		_, err = notes.Query(Note{Board: "b"}).Limit(4).After(p.Cursor).Page(singletable.WithPattern(ctx, "AP1"))
		require.NoError(t, err)
		_, err = notes.QueryIndex("GSI1", Note{Author: "x"}).Page(singletable.WithPattern(ctx, "AP2"))
		require.NoError(t, err)
		_, err = notes.Scan().Page(ctx)
		require.NoError(t, err)
		_, err = notes.Get(singletable.WithPattern(ctx, "AP3"), Note{Board: "b", ID: "2"})
		require.NoError(t, err)
		var got [3]Note
		ops := []singletable.GetOp{notes.GetOp(Note{Board: "b", ID: "1"}, &got[0]), notes.GetOp(Note{Board: "c", ID: "2"}, &got[1]),
			notes.GetOp(Note{Board: "b", ID: "none"}, &got[2])}
		_, err = singletable.BatchGet(singletable.WithPattern(ctx, "AP6"), ops)
		require.NoError(t, err)
		_, err = singletable.TxGet(singletable.WithPattern(ctx, "AP7"), ops)
		require.NoError(t, err)
		var board []Note
		_, err = notes.QueryCollection(Note{Board: "c"}).Page(singletable.WithPattern(ctx, "AP8"), notes.AppendTo(&board))
		require.NoError(t, err)
		require.Len(t, board, 3)
		var out []string
		for _, s := range spans.Ended() {
			set := attribute.NewSet(s.Attributes()...)
			out = append(out, s.Name()+" "+set.Encoded(attribute.DefaultEncoder()))
		}
		return out
	}
	spansOf(plain) // the first writes create items, the next overwrite them: another capacity
	want := spansOf(plain)
	paths.Reset()
	got := spansOf(direct)
	require.Len(t, got, 10)
	require.Equal(t, want, got)
	d, s := paths.Counts()
	require.Equal(t, [2]int64{8, 0}, [2]int64{d, s}, "responses with items decoded directly, and by the SDK")
	require.Zero(t, written.Load(), "the requests the path writes were written by it")
}
