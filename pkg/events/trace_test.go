package events_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// recordSpans installs a recording tracer provider and the W3C propagator as
// the globals, as a main program would, until the test ends. Tests using it
// must not run in parallel.
func recordSpans(t *testing.T) (*tracetest.SpanRecorder, trace.Tracer) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	oldTP, oldProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTracerProvider(oldTP)
		otel.SetTextMapPropagator(oldProp)
		_ = tp.Shutdown(context.Background())
	})
	return rec, tp.Tracer("test")
}

func spanNamed(t *testing.T, rec *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range rec.Ended() {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no span %q among %d ended spans", name, len(rec.Ended()))
	return nil
}

func attrs(s sdktrace.ReadOnlySpan, keys ...string) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		for _, k := range keys {
			if string(kv.Key) == k {
				m[k] = kv.Value.Emit()
			}
		}
	}
	return m
}

// TestTraceFollowsASpecFromAppendToHandler shows that a consumer's handler
// runs in the trace of the request that appended the spec.
func TestTraceFollowsASpecFromAppendToHandler(t *testing.T) {
	rec, tracer := recordSpans(t)
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	reqCtx, request := tracer.Start(ctx, "request")
	if _, err := events.AppendSpec(reqCtx, js, vmA, events.OpPut, []byte(`{}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	request.End()

	stored, err := events.LastSpec(ctx, js, vmA)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Header["traceparent"]) != 1 || len(stored.Header["Traceparent"]) != 0 {
		t.Errorf("stored headers %v, want a lower-case traceparent", stored.Header)
	}

	handlerSpan := make(chan trace.SpanContext, 1)
	r := runConsume(t, js, specConsumer(), func(ctx context.Context, msg jetstream.Msg) error {
		handlerSpan <- trace.SpanContextFromContext(ctx)
		return nil
	})
	inHandler := receive(t, "the handler", handlerSpan)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	publish := spanNamed(t, rec, "publish "+events.StreamSpecs)
	process := spanNamed(t, rec, testDurable+" process")
	traceID := request.SpanContext().TraceID()
	for _, c := range []struct {
		what         string
		span         sdktrace.ReadOnlySpan
		kind         trace.SpanKind
		parentSpanID trace.SpanID
	}{
		{"publish", publish, trace.SpanKindProducer, request.SpanContext().SpanID()},
		{"process", process, trace.SpanKindConsumer, publish.SpanContext().SpanID()},
	} {
		if c.span.SpanContext().TraceID() != traceID {
			t.Errorf("%s span in trace %s, want %s", c.what, c.span.SpanContext().TraceID(), traceID)
		}
		if c.span.Parent().SpanID() != c.parentSpanID {
			t.Errorf("%s span's parent %s, want %s", c.what, c.span.Parent().SpanID(), c.parentSpanID)
		}
		if c.span.SpanKind() != c.kind {
			t.Errorf("%s span kind %v, want %v", c.what, c.span.SpanKind(), c.kind)
		}
	}
	if inHandler.SpanID() != process.SpanContext().SpanID() {
		t.Errorf("handler runs in span %s, want the process span %s", inHandler.SpanID(), process.SpanContext().SpanID())
	}

	subject := events.SpecSubject(vmA)
	wantPublish := map[string]string{"messaging.system": "nats", "messaging.destination.name": subject}
	if diff := cmp.Diff(wantPublish, attrs(publish, "messaging.system", "messaging.destination.name")); diff != "" {
		t.Errorf("publish span attributes mismatch (-want +got):\n%s", diff)
	}
	wantProcess := map[string]string{"messaging.system": "nats", "messaging.destination.name": subject, "messaging.consumer.group.name": testDurable}
	if diff := cmp.Diff(wantProcess, attrs(process, "messaging.system", "messaging.destination.name", "messaging.consumer.group.name")); diff != "" {
		t.Errorf("process span attributes mismatch (-want +got):\n%s", diff)
	}
	if id := attrs(publish, "messaging.message.id")["messaging.message.id"]; id == "" || id != attrs(process, "messaging.message.id")["messaging.message.id"] {
		t.Errorf("publish and process spans carry message ids %q and %q, want the same Nats-Msg-Id", id, attrs(process, "messaging.message.id"))
	}
}

func TestTraceOfStatusAndEvents(t *testing.T) {
	rec, tracer := recordSpans(t)
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	ctx, request := tracer.Start(ctx, "reconcile")
	if _, err := events.PublishStatus(ctx, js, vmA, slice("power", "uid-a", 1, `{}`)); err != nil {
		t.Fatal(err)
	}
	if err := events.PublishEvent(ctx, js, vmA, events.TypeVirtualMachinePoweredOn, "uid-a:1", nil); err != nil {
		t.Fatal(err)
	}
	request.End()

	status := spanNamed(t, rec, "publish "+events.StreamStatus)
	event := spanNamed(t, rec, "publish "+events.StreamEvents)
	for _, s := range []sdktrace.ReadOnlySpan{status, event} {
		if s.Parent().SpanID() != request.SpanContext().SpanID() || s.SpanKind() != trace.SpanKindProducer {
			t.Errorf("span %q: parent %s kind %v, want the reconcile span and producer", s.Name(), s.Parent().SpanID(), s.SpanKind())
		}
	}
	if got := attrs(event, "messaging.destination.name")["messaging.destination.name"]; got != events.EventSubject(vmA, events.TypeVirtualMachinePoweredOn) {
		t.Errorf("event span destination %q, want the event subject", got)
	}

	st, err := js.Stream(ctx, events.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.GetLastMsgForSubject(ctx, events.EventSubject(vmA, events.TypeVirtualMachinePoweredOn))
	if err != nil {
		t.Fatal(err)
	}
	var ce events.CloudEvent
	if err := json.Unmarshal(raw.Data, &ce); err != nil {
		t.Fatal(err)
	}
	want := "00-" + event.SpanContext().TraceID().String() + "-" + event.SpanContext().SpanID().String() + "-01"
	if ce.TraceParent != want || raw.Header.Get("traceparent") != want {
		t.Errorf("event traceparent %q, header %q; want %q", ce.TraceParent, raw.Header.Get("traceparent"), want)
	}
}
