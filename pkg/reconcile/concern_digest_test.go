package reconcile

import (
	"testing"

	"github.com/vmop/vmop/pkg/events"
)

// A record whose only label is one the service ignores sums as a record without labels:
// the label's arrival (placement's zone) does not concern it; any other label does.
func TestConcernDigestPrunesWhatIgnoringLeavesEmpty(t *testing.T) {
	ign := Ignored{Spec: []Path{VMZoneLabel}}
	digest := func(record string) string {
		t.Helper()
		d, err := concernDigest("storage", Object{Spec: events.SpecRecord{Body: []byte(record)}}, ign)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	bare := digest(`{"metadata":{"name":"vm"}}`)
	if d := digest(`{"metadata":{"name":"vm","labels":{"topology.kubernetes.io/zone":"zone-a"}}}`); d != bare {
		t.Errorf("a record labelled only with the ignored zone sums %s, want %s as without labels", d, bare)
	}
	if d := digest(`{"metadata":{"name":"vm","labels":{}}}`); d != bare {
		t.Errorf("a record with empty labels sums %s, want %s as without labels", d, bare)
	}
	if d := digest(`{"metadata":{"name":"vm","labels":{"topology.kubernetes.io/zone":"zone-a","app":"web"}}}`); d == bare {
		t.Error("a record with a label the service reads sums as one without labels")
	}
}
