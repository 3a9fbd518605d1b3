package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// /readyz says whether the gateway can answer a consistent read now, which is what a
// balancer needs: while its read model is behind the streams (its feed of SPECS lost, and
// the consumer's recreation unanswered, as after a NATS node is killed) it is 503, and
// once the fold follows the streams again it is 200 and the write is there.
func TestReadyzFollowsTheReadModelsLag(t *testing.T) {
	admin, js, unanswered := eventstest.LosingRecreations(t, 5*time.Second, events.StreamSpecs)
	g := startGateway(t, js, t.TempDir())
	ready := func() int {
		code, _ := g.do("GET", "/readyz", "", nil)
		return code
	}
	if code := ready(); code != http.StatusOK {
		t.Fatalf("/readyz of a gateway that is current = %d, want 200", code)
	}

	eventstest.DropConsumers(t, admin, events.StreamSpecs)
	ns := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"written-meanwhile","uid":"u1"}}`)
	if _, err := events.AppendSpec(t.Context(), admin, events.Ref{Plural: "namespaces", Name: "written-meanwhile"}, events.OpPut, ns, 0, nil); err != nil {
		t.Fatal(err)
	}
	g.eventually("/readyz 503 while the read model is behind", func() bool { return ready() == http.StatusServiceUnavailable })
	if unanswered.Load() == 0 {
		t.Error("no recreation of the consumer was left unanswered: the test did not test the loss")
	}
	g.eventually("/readyz 200 once the fold follows the streams again", func() bool { return ready() == http.StatusOK })
	if code, body := g.do("GET", "/api/v1/namespaces/written-meanwhile", adminToken, nil); code != http.StatusOK {
		t.Errorf("GET of the namespace written meanwhile = %d %s", code, body)
	}
}
