package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// In a cluster a direct get may be answered by a follower that has not applied the newest
// messages yet: the recorded message is missing there, and its subject's newest is an
// older one. That history is late, not another: the check asks the leader, and the mark
// holds (a gateway restarting next to such a follower kept its read model and its
// clients' watches).
func TestMarkHoldsAgainstALaggingFollower(t *testing.T) {
	cluster := eventstest.StartCluster(t, 3)
	admin, nc := cluster.Connect(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := events.Setup(ctx, admin, events.WithReplicas(3)); err != nil {
		t.Fatal(err)
	}
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm"}
	publish := func(state string) uint64 {
		t.Helper()
		seq, err := events.PublishStatus(ctx, admin, ref, events.Slice{Service: "power", UID: "u", Generation: 1,
			Status: json.RawMessage(`{"powerState":"` + state + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	get := func(seq uint64) *nats.Msg {
		t.Helper()
		m, err := nc.Request("$JS.API.DIRECT.GET."+events.StreamStatus, fmt.Appendf(nil, `{"seq":%d}`, seq), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	older := get(publish("PoweredOff")) // the follower's newest of the subject
	seq := publish("PoweredOn")
	recorded := get(seq)
	mark := events.MarkOf(seq, recorded.Header.Get("Nats-Subject"), recorded.Header, recorded.Data)
	missing := get(1 << 40) // the follower's answer for a message it does not hold

	bySeq := "$JS.API.DIRECT.GET." + events.StreamStatus
	lastBySubject := bySeq + "." + events.StatusSubject(ref, "power")
	js := eventstest.Lossy(t, cluster.Nodes[0], 5*time.Second, func(subject string, m *nats.Msg, _ *string) bool {
		answer := map[string]*nats.Msg{bySeq: missing, lastBySubject: older}[subject]
		if answer == nil {
			return false
		}
		_ = nc.PublishMsg(&nats.Msg{Subject: m.Reply, Header: answer.Header, Data: answer.Data})
		return true
	})
	if err := events.CheckMark(ctx, js, events.StreamStatus, mark); err != nil {
		t.Errorf("check of the newest message's mark against a lagging follower: %v, want it to hold", err)
	}
}
