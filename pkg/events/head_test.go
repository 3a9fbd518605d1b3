package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// Without a cluster the head of a stream and a slice "from the leader" are direct gets:
// no JetStream API request, whose every call costs the server the requester's JWT. In a
// cluster both are asked of the leader. Either way they give the newest.
func TestHeadAndLeaderReads(t *testing.T) {
	t.Run("one server", func(t *testing.T) {
		js, nc := eventstest.JetStream(t)
		checkHeadAndLeaderReads(t, js, nc, false)
	})
	t.Run("cluster", func(t *testing.T) {
		js, nc := eventstest.StartCluster(t, 3).Connect(t)
		checkHeadAndLeaderReads(t, js, nc, true)
	})
}

func checkHeadAndLeaderReads(t *testing.T, js jetstream.JetStream, nc *nats.Conn, clustered bool) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	replicas := 1
	if clustered {
		replicas = 3
	}
	if err := events.Setup(ctx, js, events.WithReplicas(replicas)); err != nil {
		t.Fatal(err)
	}
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm"}
	var seq uint64
	for gen := range int64(3) {
		s, err := events.PublishStatus(ctx, js, ref, events.Slice{Service: "power", UID: "u", Generation: gen + 1})
		if err != nil {
			t.Fatal(err)
		}
		seq = s
	}
	sub, err := nc.SubscribeSync("$JS.API.STREAM.>")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	head, err := events.Head(ctx, js, events.StreamStatus)
	if err != nil || head != seq {
		t.Errorf("head of STATUS %d, %v; want %d", head, err, seq)
	}
	rec, err := events.LastStatusFromLeader(ctx, js, ref, "power")
	if err != nil || rec.Slice.Generation != 3 || rec.Seq != seq {
		t.Errorf("slice from the leader %+v at %d, %v; want generation 3 at %d", rec.Slice, rec.Seq, err, seq)
	}
	requests := requestsSeen(t, nc, sub)
	want := []string{"$JS.API.STREAM.INFO." + events.StreamStatus, "$JS.API.STREAM.MSG.GET." + events.StreamStatus}
	if !clustered {
		want = nil
	}
	if len(requests) != len(want) || len(want) > 0 && (requests[0] != want[0] || requests[1] != want[1]) {
		t.Errorf("API requests %q, want %q", requests, want)
	}
}

// A stream whose newest message was deleted (a purged slice) has no newest message to get:
// its head is where its stream information says it ends, never before the newest it holds.
func TestHeadPastADeletedTail(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	if err := events.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm"}
	var last uint64
	for _, svc := range []string{"power", "storage"} {
		seq, err := events.PublishStatus(ctx, js, ref, events.Slice{Service: svc, UID: "u", Generation: 1})
		if err != nil {
			t.Fatal(err)
		}
		last = seq
	}
	st, err := js.Stream(ctx, events.StreamStatus)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, last); err != nil {
		t.Fatal(err)
	}
	if head, err := events.Head(ctx, js, events.StreamStatus); err != nil || head != last {
		t.Errorf("head of STATUS past its deleted tail %d, %v; want %d", head, err, last)
	}
}

// requestsSeen are the subjects sub (a synchronous subscription of nc) received before a
// round trip to the server now.
func requestsSeen(t *testing.T, nc *nats.Conn, sub *nats.Subscription) []string {
	t.Helper()
	if err := nc.Flush(); err != nil { // every message sent to sub before this is pending now
		t.Fatal(err)
	}
	n, _, err := sub.Pending()
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for range n {
		m, err := sub.NextMsg(time.Second)
		if err != nil {
			t.Fatal(err)
		}
		subjects = append(subjects, m.Subject)
	}
	return subjects
}
