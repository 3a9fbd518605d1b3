package placement

import (
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// One trace links the request that stored the VM, placement's handling of the SPECS
// message and the vCenter deploy it caused: the deploy span is a child of placement's
// consumer span, which continues the writer's trace carried in the message headers.
func TestTraceLinksCreateCallToConsumerSpan(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()
	h.waitIdle()

	v := newTestVM("traced-vm")
	ctx, post := otel.Tracer("test").Start(h.ctx, "POST virtualmachines", trace.WithSpanKind(trace.SpanKindServer))
	body := v.object(1, false)
	if _, err := events.AppendSpec(ctx, h.js, v.ref, events.OpPut, mustJSON(t, body), 0, nil); err != nil {
		t.Fatal(err)
	}
	post.End()
	traceID := post.SpanContext().TraceID()
	h.waitSlice(v.ref, "created", created)

	var deploy, consumer sdktrace.ReadOnlySpan
	deadline := time.Now().Add(waitFor)
	for consumer == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no deploy span with an ended parent consumer span in trace %s (deploy: %v)", traceID, deploy != nil)
		}
		time.Sleep(pollEvery) // the consumer span ends after the slice is published
		byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
		for _, s := range spans.Ended() {
			if s.SpanContext().TraceID() == traceID {
				byID[s.SpanContext().SpanID()] = s
				if s.Name() == spanDeploy {
					deploy = s
				}
			}
		}
		if deploy != nil {
			if p, ok := byID[deploy.Parent().SpanID()]; ok {
				consumer = p
			}
		}
	}
	if consumer.SpanKind() != trace.SpanKindConsumer || consumer.Name() != events.Durable(model.ServicePlacement)+" process" {
		t.Errorf("deploy's parent is %s (%v), want placement's consumer span", consumer.Name(), consumer.SpanKind())
	}
	if deploy.SpanKind() != trace.SpanKindClient || deploy.EndTime().Before(deploy.StartTime()) {
		t.Errorf("deploy span kind %v, want client", deploy.SpanKind())
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
