package events_test

import (
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/vmop/vmop/pkg/events"
)

// In a cluster a direct get may be answered by a follower that has not applied the newest
// messages yet: the recorded message is missing there, and its subject's newest is an
// older one. That history is late, not another: the check asks the leader, and the mark
// holds (a gateway restarting next to such a follower kept its read model and its
// clients' watches).
func TestMarkHoldsAgainstALaggingFollower(t *testing.T) {
	r := startReplicated(t)
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm"}
	publish := func(state string) uint64 {
		t.Helper()
		seq, err := events.PublishStatus(t.Context(), r.admin, ref, events.Slice{Service: "power", UID: "u", Generation: 1,
			Status: json.RawMessage(`{"powerState":"` + state + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	older := r.statusAt(t, publish("PoweredOff")) // the follower's newest of the subject
	seq := publish("PoweredOn")
	recorded := r.statusAt(t, seq)
	mark := events.MarkOf(seq, recorded.Header.Get("Nats-Subject"), recorded.Header, recorded.Data)

	js := r.lagging(t, r.missing(t), map[string]*nats.Msg{events.StatusSubject(ref, "power"): older})
	if err := events.CheckMark(t.Context(), js, events.StreamStatus, mark); err != nil {
		t.Errorf("check of the newest message's mark against a lagging follower: %v, want it to hold", err)
	}
}
