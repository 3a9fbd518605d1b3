package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/vmop/vmop/pkg/events"
)

// In a cluster a direct get may be answered by a follower that has not applied the newest
// slice yet. A publish that finds its own content in such an answer does not take it for
// what is stored; the leader says. Here every direct get of the slice is answered with an
// older message, X, as such a follower would: publishing X over a newer Y stores it, and a
// fenced publish of X, whose reconcile read X before another replica published Y, fails
// with ErrConflict instead of passing for stored.
func TestPublishDoesNotTrustALaggingFollower(t *testing.T) {
	r := startReplicated(t)
	ctx := t.Context()
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm"}
	slice := func(state string) events.Slice {
		return events.Slice{Service: "power", UID: "u", Generation: 1, Status: json.RawMessage(`{"powerState":"` + state + `"}`)}
	}
	x, y := slice("PoweredOff"), slice("PoweredOn")
	publish := func(s events.Slice) uint64 {
		t.Helper()
		seq, err := events.PublishStatus(ctx, r.admin, ref, s)
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	stored := func() events.StatusRecord {
		t.Helper()
		rec, err := events.LastStatusFromLeader(ctx, r.admin, ref, "power")
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	// What a follower that applied X but not what came after answers: X's message, as a
	// direct get answered it before anything replaced it (one slice per subject is kept).
	js := r.lagging(t, nil, map[string]*nats.Msg{events.StatusSubject(ref, "power"): r.statusAt(t, publish(x))})

	ySeq := publish(y)
	if _, err := events.PublishStatus(ctx, js, ref, x); err != nil {
		t.Fatal(err)
	}
	if rec := stored(); !bytes.Equal(rec.Slice.Status, x.Status) || rec.Seq <= ySeq {
		t.Errorf("stored %s at %d after publishing X over Y (at %d); want X, stored anew", rec.Slice.Status, rec.Seq, ySeq)
	}

	read := stored().Seq // the reconcile reads X; another replica then publishes Y
	publish(y)
	_, err := events.PublishStatus(events.FenceStatus(ctx, ref, "power", read), js, ref, x)
	if !errors.Is(err, events.ErrConflict) {
		t.Errorf("fenced publish of X after Y came: %v, want %v", err, events.ErrConflict)
	}
	if rec := stored(); !bytes.Equal(rec.Slice.Status, y.Status) {
		t.Errorf("stored %s, want Y, which the fenced publish never saw", rec.Slice.Status)
	}
}

// A purge of a deleted object's slices does not take a lagging follower's answer (the
// slice is not there yet) for the slice being gone: the leader says what to delete, and
// nothing is left behind for good.
func TestPurgeDoesNotTrustALaggingFollower(t *testing.T) {
	r := startReplicated(t)
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "gone"}
	if _, err := events.PublishStatus(t.Context(), r.admin, ref, events.Slice{Service: "power", UID: "u", Generation: 1}); err != nil {
		t.Fatal(err)
	}
	js := r.lagging(t, nil, map[string]*nats.Msg{events.StatusSubject(ref, "power"): r.missing(t)})
	if err := events.PurgeStatus(t.Context(), js, ref); err != nil {
		t.Fatal(err)
	}
	if rec, err := events.LastStatusFromLeader(t.Context(), r.admin, ref, "power"); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("after the purge the leader holds %+v (%v), want no slice", rec.Slice, err)
	}
}
