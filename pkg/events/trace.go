package events

import (
	"context"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const tracerName = "github.com/vmop/vmop/pkg/events"

// OpenTelemetry messaging attribute keys.
const (
	attrSystem        = "messaging.system"
	attrDestination   = "messaging.destination.name"
	attrOperationType = "messaging.operation.type"
	attrMessageID     = "messaging.message.id"
	attrConsumerGroup = "messaging.consumer.group.name"
	systemNATS        = "nats"
)

// tracer is looked up on every use so that a provider installed by main
// after this package was loaded is honoured.
func tracer() trace.Tracer { return otel.Tracer(tracerName) }

// headerCarrier carries W3C trace context in NATS headers. nats.Header is
// case-sensitive and other languages and the server's message tracer expect
// lower-case "traceparent", so keys are written in lower case and read in any
// case.
type headerCarrier nats.Header

func (c headerCarrier) Get(key string) string {
	key = strings.ToLower(key)
	if v := nats.Header(c).Get(key); v != "" {
		return v
	}
	for k, v := range c {
		if strings.EqualFold(k, key) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

func (c headerCarrier) Set(key, value string) { nats.Header(c).Set(strings.ToLower(key), value) }

func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// startPublish starts a PRODUCER span for a publish to subject and injects
// its context into hdr.
func startPublish(ctx context.Context, stream, subject string, hdr nats.Header) (context.Context, trace.Span) {
	ctx, span := tracer().Start(ctx, "publish "+stream,
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			attribute.String(attrSystem, systemNATS),
			attribute.String(attrDestination, subject),
			attribute.String(attrOperationType, "send"),
		))
	otel.GetTextMapPropagator().Inject(ctx, headerCarrier(hdr))
	return ctx, span
}

// startProcess extracts the producer's context from a consumed message and
// starts a CONSUMER span for its processing, "<durable> process".
func startProcess(ctx context.Context, durable, subject string, hdr nats.Header) (context.Context, trace.Span) {
	ctx = otel.GetTextMapPropagator().Extract(ctx, headerCarrier(hdr))
	attrs := []attribute.KeyValue{
		attribute.String(attrSystem, systemNATS),
		attribute.String(attrDestination, subject),
		attribute.String(attrOperationType, "process"),
		attribute.String(attrConsumerGroup, durable),
	}
	if id := hdr.Get(jetstream.MsgIDHeader); id != "" {
		attrs = append(attrs, attribute.String(attrMessageID, id))
	}
	return tracer().Start(ctx, durable+" process",
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attrs...))
}

// endSpan records err, if any, and ends span.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// traceParent is the W3C traceparent of the span in ctx, "" when there is none.
func traceParent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c.Get("traceparent")
}
