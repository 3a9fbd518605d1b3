package main

import (
	"os"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// spans records every span of this test binary: the stack leaves the global provider
// alone when OTEL_TRACES_EXPORTER is unset.
var spans = tracetest.NewSpanRecorder()

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		main() // the durability test's vmop process
		return
	}
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	os.Exit(m.Run())
}

const tracedVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: traced-vm
spec:
  className: my-vm-class
  imageName: vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
`

// One trace holds the HTTP request that created a VM and the placement service's
// handling of it, carried across NATS in the message headers.
func TestTraceFollowsRequestThroughNATS(t *testing.T) {
	s := startStack(t)
	out, err := s.kubectlCtx(t.Context(), []byte(tracedVM), "apply", "-n", "my-namespace", "-f", "-")
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	placement := events.Durable(model.ServicePlacement)
	s.eventually("placement's handling and its vCenter create call in the POST's trace", func() bool {
		posts := map[trace.TraceID]bool{}
		for _, sp := range spans.Ended() {
			if sp.SpanKind() == trace.SpanKindServer && hasAttr(sp.Attributes(), "http.request.method", "POST") {
				posts[sp.SpanContext().TraceID()] = true
			}
		}
		consumes := map[trace.SpanID]bool{} // placement's consume spans in a POST's trace
		for _, sp := range spans.Ended() {
			if sp.SpanKind() == trace.SpanKindConsumer && hasAttr(sp.Attributes(), "messaging.consumer.group.name", placement) &&
				posts[sp.SpanContext().TraceID()] {
				consumes[sp.SpanContext().SpanID()] = true
			}
		}
		for _, sp := range spans.Ended() {
			if sp.Name() == "vcenter DeployLibraryItem" && consumes[sp.Parent().SpanID()] {
				return true
			}
		}
		return false
	})
}

func hasAttr(attrs []attribute.KeyValue, key, value string) bool {
	for _, a := range attrs {
		if string(a.Key) == key && a.Value.AsString() == value {
			return true
		}
	}
	return false
}
