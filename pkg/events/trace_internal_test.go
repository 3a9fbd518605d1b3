package events

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
)

func TestHeaderCarrierWritesLowerCaseAndReadsAnyCase(t *testing.T) {
	h := nats.Header{}
	c := headerCarrier(h)
	c.Set("Traceparent", "00-a-b-01")
	c.Set("tracestate", "k=v")
	if diff := cmp.Diff(nats.Header{"traceparent": {"00-a-b-01"}, "tracestate": {"k=v"}}, h); diff != "" {
		t.Errorf("headers mismatch (-want +got):\n%s", diff)
	}

	fromGo := headerCarrier(nats.Header{"Traceparent": {"00-c-d-01"}})
	if got := fromGo.Get("traceparent"); got != "00-c-d-01" {
		t.Errorf("Get(traceparent) on a canonical-case header = %q, want 00-c-d-01", got)
	}
	if got := fromGo.Get("tracestate"); got != "" {
		t.Errorf("Get(tracestate) = %q, want empty", got)
	}
	if diff := cmp.Diff([]string{"Traceparent"}, fromGo.Keys()); diff != "" {
		t.Errorf("Keys() mismatch (-want +got):\n%s", diff)
	}
}
