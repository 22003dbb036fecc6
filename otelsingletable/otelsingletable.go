// Package otelsingletable reports the requests of a singletable.Table to
// OpenTelemetry: a span and metrics per request, named by access pattern.
// It is its own module, so that OpenTelemetry stays out of singletable's
// go.mod.
//
//	h := otelsingletable.New(otel.GetTracerProvider(), otel.GetMeterProvider())
//	t := singletable.NewTable(client, "app", func(o *singletable.TableOptions) { o.Observe = h.Observe })
//	ctx = singletable.WithPattern(ctx, "AP3")
//
// A span is named "<pattern> <operation>" ("AP3 Query"), or "<entity>
// <operation>" without a pattern; it starts when the request was sent and
// ends at its answer, as a child of the span on the request's context. Its
// attributes follow OpenTelemetry's database and DynamoDB conventions
// (db.system.name, db.operation.name, aws.dynamodb.table_names,
// aws.dynamodb.index_name, aws.dynamodb.consumed_capacity as total units)
// plus singletable.pattern, singletable.entity, singletable.plan_read,
// singletable.items.returned, singletable.items.scanned,
// singletable.retry, singletable.attempts and singletable.throttles. No
// item value is recorded, keys neither.
//
// Metrics, each with the attributes singletable.pattern, singletable.entity,
// db.operation.name and aws.dynamodb.index_name (and, for errors, the
// error.type of the failure):
//   - singletable.request.duration (histogram, s): latency per request;
//   - singletable.consumed_capacity (counter, {unit}), with
//     singletable.capacity "read" or "write" and aws.dynamodb.index_name
//     the place the units were consumed ("" for the table);
//   - singletable.items.scanned and singletable.items.returned (counters);
//   - singletable.throttles (counter): throttled attempts, SDK retries and
//     unprocessed batch items together.
package otelsingletable

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/singletable-go/singletable"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/singletable-go/singletable/otelsingletable"

// Hook reports observations to OpenTelemetry. Make it with [New].
type Hook struct {
	tracer                      trace.Tracer
	duration                    metric.Float64Histogram
	capacity, scanned, returned metric.Float64Counter
	throttles                   metric.Int64Counter
}

// New returns a Hook tracing with tp and measuring with mp.
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Hook, error) {
	m := mp.Meter(ScopeName)
	h := &Hook{tracer: tp.Tracer(ScopeName)}
	var err error
	if h.duration, err = m.Float64Histogram("singletable.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Latency of a DynamoDB request, SDK retries included")); err != nil {
		return nil, err
	}
	if h.capacity, err = m.Float64Counter("singletable.consumed_capacity", metric.WithUnit("{unit}"),
		metric.WithDescription("Capacity units consumed, as DynamoDB reported them")); err != nil {
		return nil, err
	}
	if h.scanned, err = m.Float64Counter("singletable.items.scanned", metric.WithUnit("{item}"),
		metric.WithDescription("Items DynamoDB read to answer")); err != nil {
		return nil, err
	}
	if h.returned, err = m.Float64Counter("singletable.items.returned", metric.WithUnit("{item}"),
		metric.WithDescription("Items returned")); err != nil {
		return nil, err
	}
	if h.throttles, err = m.Int64Counter("singletable.throttles", metric.WithUnit("{throttle}"),
		metric.WithDescription("Throttled attempts and unprocessed batch items")); err != nil {
		return nil, err
	}
	return h, nil
}

// Observe is the [singletable.TableOptions] Observe hook.
func (h *Hook) Observe(ctx context.Context, o *singletable.Observation) {
	end := time.Now()
	name := o.Pattern
	if name == "" {
		name = o.Entity
	}
	if name == "" {
		name = o.Op
	} else {
		name += " " + o.Op
	}
	read, write := o.Units()
	common := []attribute.KeyValue{
		attribute.String("singletable.pattern", o.Pattern),
		attribute.String("singletable.entity", o.Entity),
		attribute.String("db.operation.name", o.Op),
	}
	spanAttrs := append(common[:len(common):len(common)],
		attribute.String("db.system.name", "aws.dynamodb"),
		attribute.StringSlice("aws.dynamodb.table_names", []string{o.Table}),
		attribute.String("aws.dynamodb.index_name", o.Index),
		attribute.Float64("aws.dynamodb.consumed_capacity", read+write),
		attribute.Bool("singletable.plan_read", o.PlanRead),
		attribute.Int("singletable.items.returned", o.Count),
		attribute.Int("singletable.items.scanned", o.Scanned),
		attribute.Int("singletable.retry", o.Retry),
		attribute.Int("singletable.attempts", o.Attempts),
		attribute.Int("singletable.throttles", o.Throttles),
	)
	_, span := h.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(end.Add(-o.Latency)), trace.WithAttributes(spanAttrs...))
	if o.Err != nil {
		span.RecordError(o.Err)
		span.SetStatus(codes.Error, o.Op+" failed")
	}
	span.End(trace.WithTimestamp(end))

	reqAttrs := append(common[:len(common):len(common)], attribute.String("aws.dynamodb.index_name", o.Index))
	if o.Err != nil {
		reqAttrs = append(reqAttrs, attribute.String("error.type", fmt.Sprintf("%T", o.Err)))
	}
	set := metric.WithAttributeSet(attribute.NewSet(reqAttrs...))
	h.duration.Record(ctx, o.Latency.Seconds(), set)
	if o.Scanned > 0 {
		h.scanned.Add(ctx, float64(o.Scanned), set)
	}
	if o.Count > 0 {
		h.returned.Add(ctx, float64(o.Count), set)
	}
	if n := o.Throttles + o.Unprocessed; n > 0 {
		h.throttles.Add(ctx, int64(n), set)
	}
	kind := "read"
	if write > 0 {
		kind = "write"
	}
	for index, units := range o.IndexUnits() {
		h.capacity.Add(ctx, units, metric.WithAttributeSet(attribute.NewSet(append(common[:len(common):len(common)],
			attribute.String("aws.dynamodb.index_name", index), attribute.String("singletable.capacity", kind))...)))
	}
}
