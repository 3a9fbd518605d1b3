package placement

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
			t.Fatalf("no deploy span with an ended parent consumer span in trace %s (deploy: %v); the VM's deploys: %s",
				traceID, deploy != nil, deploysOf(v.ref))
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

// deploysOf describes every ended deploy span of the VM, in whichever trace, with its
// parent's name: what to look at when the deploy is not where the test expects it.
func deploysOf(ref events.Ref) string {
	ended := spans.Ended()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byID[s.SpanContext().SpanID()] = s
	}
	var out []string
	for _, s := range ended {
		if s.Name() != spanDeploy || !slices.Contains(s.Attributes(), objectAttr(ref.Namespace, ref.Name)) {
			continue
		}
		parent := "(not ended or none)"
		if p, ok := byID[s.Parent().SpanID()]; ok {
			parent = p.Name()
		}
		out = append(out, fmt.Sprintf("trace %s, parent %s", s.SpanContext().TraceID(), parent))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
