package kubeevents

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// folding opens a Store at dir and folds js into it until the test ends.
func folding(t *testing.T, js jetstream.JetStream, dir string) *Store {
	t.Helper()
	s, err := Open(filepath.Join(dir, "events.db"), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Fold(ctx, js) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Fold: %v", err)
		}
		s.Close()
	})
	return s
}

func publish(t *testing.T, js jetstream.JetStream, ref events.Ref, typ, id string, data any) {
	t.Helper()
	if err := events.PublishEvent(context.Background(), js, ref, typ, id, data); err != nil {
		t.Fatal(err)
	}
}

func synced(t *testing.T, s *Store, js jetstream.JetStream) {
	t.Helper()
	if err := s.Sync(context.Background(), js); err != nil {
		t.Fatal(err)
	}
}

func decodeEvents(t *testing.T, items [][]byte) []corev1.Event {
	t.Helper()
	out := make([]corev1.Event, len(items))
	for i, raw := range items {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func reasons(evs []corev1.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.InvolvedObject.Name + ":" + ev.Reason
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var (
	vmA = events.Ref{Plural: "virtualmachines", Namespace: "ns-1", Name: "vm-a"}
	vmB = events.Ref{Plural: "virtualmachines", Namespace: "ns-1", Name: "vm-b"}
	vmC = events.Ref{Plural: "virtualmachines", Namespace: "ns-2", Name: "vm-a"}
)

func TestListSelectsAndPages(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	publish(t, js, vmA, events.TypeVirtualMachineCreated, "uid-a/created", map[string]any{"metadata": map[string]any{"uid": "uid-a"}})
	publish(t, js, vmB, events.TypeVirtualMachineCreated, "uid-b/created", map[string]any{})
	publish(t, js, vmC, events.TypeVirtualMachineCreated, "uid-c/created", map[string]any{})
	publish(t, js, vmA, events.TypeVirtualMachinePoweredOn, "uid-a/poweredon/3", map[string]any{"previousPowerState": "PoweredOff"})
	publish(t, js, vmA, events.TypeVirtualMachinePoweredOn, "old-uid/poweredon/1", map[string]any{}) // an earlier VM of that name
	s := folding(t, js, t.TempDir())
	synced(t, s, js)

	// What kubectl describe asks (client-go's Events().Search).
	sel := fields.Set{"involvedObject.name": "vm-a", "involvedObject.namespace": "ns-1",
		"involvedObject.kind": "VirtualMachine", "involvedObject.uid": "uid-a"}.AsSelector()
	res, err := s.List(ListOptions{Namespace: "ns-1", Fields: sel})
	if err != nil {
		t.Fatal(err)
	}
	if got := reasons(decodeEvents(t, res.Items)); !equal(got, []string{"vm-a:Created", "vm-a:PoweredOn"}) {
		t.Errorf("describe's events = %v", got)
	}
	if res.RV != "5" {
		t.Errorf("list resourceVersion = %q, want the last sequence 5", res.RV)
	}

	res, err = s.List(ListOptions{Fields: fields.OneTermNotEqualSelector("reason", "Created")})
	if err != nil {
		t.Fatal(err)
	}
	if got := reasons(decodeEvents(t, res.Items)); !equal(got, []string{"vm-a:PoweredOn", "vm-a:PoweredOn"}) {
		t.Errorf("events of every namespace but Created = %v", got)
	}

	var pages [][]string
	opts := ListOptions{Namespace: "ns-1", Limit: 2}
	for {
		res, err := s.List(opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.RV != "5" {
			t.Errorf("page resourceVersion %q, want the first page's 5", res.RV)
		}
		pages = append(pages, reasons(decodeEvents(t, res.Items)))
		if opts.Continue = res.Continue; opts.Continue == "" {
			break
		}
		publish(t, js, vmB, events.TypeVirtualMachineDeleted, "uid-b/deleted", map[string]any{}) // after the list: not in it
		synced(t, s, js)
	}
	if len(pages) != 2 || !equal(pages[0], []string{"vm-a:Created", "vm-b:Created"}) {
		t.Errorf("pages = %v", pages)
	}

	for _, bad := range []fields.Selector{fields.OneTermEqualSelector("spec.nodeName", "x")} {
		if _, err := s.List(ListOptions{Fields: bad}); !errors.Is(err, ErrInvalid) {
			t.Errorf("List with %s: %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := s.List(ListOptions{Continue: "garbage"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("List with a bad continue: %v, want ErrInvalid", err)
	}
	ev := decodeEvents(t, [][]byte{res.Items[0]})[0]
	if raw, err := s.Get("ns-1", ev.Name); err != nil || decodeEvents(t, [][]byte{raw})[0].UID != ev.UID {
		t.Errorf("Get(%s) = %s, %v", ev.Name, raw, err)
	}
	if _, err := s.Get("ns-2", ev.Name); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get in another namespace: %v, want ErrNotFound", err)
	}
}

func receive(t *testing.T, ch <-chan Change) Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("watch ended")
		}
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return Change{}
}

func TestWatchResumesAndFollows(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	publish(t, js, vmA, events.TypeVirtualMachineCreated, "uid-a/created", map[string]any{})
	publish(t, js, vmB, events.TypeVirtualMachineCreated, "uid-b/created", map[string]any{})
	s := folding(t, js, t.TempDir())
	synced(t, s, js)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// kubectl get events -w: from the list's resourceVersion, only what follows.
	live, err := s.Watch(ctx, WatchOptions{Namespace: "ns-1", FromRV: s.RV()})
	if err != nil {
		t.Fatal(err)
	}
	// A watch resumed from the first event replays the second, then follows.
	resumed, err := s.Watch(ctx, WatchOptions{Namespace: "ns-1", FromRV: "1"})
	if err != nil {
		t.Fatal(err)
	}
	// An informer's watch-list: the current events, then the bookmark ending them.
	initial, err := s.Watch(ctx, WatchOptions{
		Fields: fields.OneTermEqualSelector("involvedObject.name", "vm-b"), InitialEventsEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := receive(t, resumed); c.Type != Added || c.RV != "2" {
		t.Errorf("resumed watch's first event %s at %s, want ADDED at 2", c.Type, c.RV)
	}
	if c := receive(t, initial); c.Type != Added || c.RV != "2" {
		t.Errorf("initial event %s at %s, want vm-b's ADDED at 2", c.Type, c.RV)
	}
	if c := receive(t, initial); c.Type != Bookmark || c.RV != "2" {
		t.Errorf("after the initial events: %s at %s, want the bookmark at 2", c.Type, c.RV)
	}

	publish(t, js, vmC, events.TypeVirtualMachinePoweredOff, "uid-c/poweredoff/4", map[string]any{}) // another namespace
	publish(t, js, vmA, events.TypeVirtualMachinePoweredOff, "uid-a/poweredoff/5", map[string]any{})
	for name, w := range map[string]<-chan Change{"live": live, "resumed": resumed} {
		c := receive(t, w)
		ev := decodeEvents(t, [][]byte{c.Event})[0]
		if c.Type != Added || c.RV != "4" || ev.Reason != "PoweredOff" || ev.InvolvedObject.Name != "vm-a" {
			t.Errorf("%s watch: %s at %s, %s of %s; want vm-a's PoweredOff at 4", name, c.Type, c.RV, ev.Reason, ev.InvolvedObject.Name)
		}
	}
	if _, err := s.Watch(ctx, WatchOptions{FromRV: "x"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("watch from a malformed resourceVersion: %v, want ErrInvalid", err)
	}
}

func TestRetentionAndRestart(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	dir := t.TempDir()
	publish(t, js, vmA, events.TypeVirtualMachineCreated, "uid-a/created", map[string]any{})
	first := folding(t, js, dir)
	synced(t, first, js)
	before, err := first.List(ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// A second gateway (or this one restarted) folds the window again: same Events.
	again := folding(t, js, t.TempDir())
	synced(t, again, js)
	after, err := again.List(ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Items) != 1 || string(after.Items[0]) != string(before.Items[0]) {
		t.Errorf("refolded events %s, want %s", after.Items, before.Items)
	}

	if err := first.prune(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	res, err := first.List(ListOptions{})
	if err != nil || len(res.Items) != 0 {
		t.Errorf("after the retention: %d events, %v; want none", len(res.Items), err)
	}
	// A resourceVersion before the pruned event cannot be resumed from: 410 for the client.
	publish(t, js, vmA, events.TypeVirtualMachineDeleted, "uid-a/deleted", map[string]any{})
	synced(t, first, js)
	if err := first.prune(time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := first.Watch(ctx, WatchOptions{FromRV: "0"}); err != nil {
		t.Fatal(err)
	}
	w, err := first.Watch(ctx, WatchOptions{FromRV: "1"})
	if err != nil {
		t.Fatalf("watch from the pruned event's resourceVersion: %v", err)
	}
	if c := receive(t, w); c.RV != "2" {
		t.Errorf("watch from 1: event at %s, want 2", c.RV)
	}
	if err := first.prune(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Watch(ctx, WatchOptions{FromRV: "1"}); !errors.Is(err, ErrGone) {
		t.Errorf("watch from before the events kept: %v, want ErrGone", err)
	}
}

// The retention's prune, run every minute, reads the Events past the retention through
// the index on stored, not every Event from the newest down.
func TestPruneReadsOnlyOldEvents(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "events.db"), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var plan []struct {
		ID, Parent, Notused int
		Detail              string
	}
	if err := s.writer.Select(&plan, "EXPLAIN QUERY PLAN "+pruneQuery, time.Now().UnixNano()); err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 || !strings.Contains(plan[0].Detail, "INDEX events_by_stored (stored<?)") {
		t.Errorf("prune's plan %+v, want a search of events_by_stored by stored", plan)
	}
}
