package readmodel

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The initial events are one snapshot, however many objects: the changes made while they
// are being sent follow them live, in order, none lost and none repeated.
func TestWatchInitialEventsThenLiveChanges(t *testing.T) {
	h := newHarness(t)
	n := 600
	objs := make([]obj, n)
	for i := range objs {
		objs[i] = obj{ns: "ns", name: fmt.Sprintf("vm-%04d", i), uid: fmt.Sprint(i), spec: map[string]any{"n": 0}}
	}
	seed(h, objs...)
	snapRV := h.store.RV()
	snapshot := map[string]string{}
	for _, o := range objs {
		snapshot[o.name] = h.get(o).RV
	}

	w := h.watch(WatchOptions{SendInitial: true, InitialEventsEnd: true})
	first := collect(t, w, 1) // the watch now waits to send the second

	modifiedFirst, modifiedLater, deletedLater := objs[10], objs[n-50], objs[n-40]
	addedLater := obj{ns: "ns", name: "vm-9999", uid: "new"}
	modifiedFirst.spec = map[string]any{"n": 1}
	modifiedLater.spec = map[string]any{"n": 1}
	h.put(modifiedFirst)
	h.put(modifiedLater)
	deleteSeq := h.remove(deletedLater)
	h.waitSpec(h.put(addedLater))

	rest := collect(t, w, n) // n-1 more ADDED and the bookmark
	seen := map[string]string{}
	for _, e := range append(first, rest[:n-1]...) {
		if e.Type != Added {
			t.Fatalf("initial event %+v, want ADDED", e)
		}
		seen[e.Name] = e.RV
	}
	if !cmp.Equal(snapshot, seen) {
		t.Errorf("initial events differ from the snapshot (-want +got):\n%s", cmp.Diff(snapshot, seen))
	}
	if want := (event{Type: Bookmark, RV: snapRV}); rest[n-1] != want {
		t.Errorf("after the initial events %+v, want %+v", rest[n-1], want)
	}

	live := collect(t, w, 4)
	want := []event{
		{Modified, modifiedFirst.name, h.get(modifiedFirst).RV},
		{Modified, modifiedLater.name, h.get(modifiedLater).RV},
		{Deleted, deletedLater.name, fmt.Sprintf("%d.0", deleteSeq)},
		{Added, addedLater.name, h.get(addedLater).RV},
	}
	if !cmp.Equal(want, live) {
		t.Errorf("live events %+v, want %+v", live, want)
	}
	assertQuiet(t, w)
}

// Periodic bookmarks carry a position every delivered change is at or before; resuming
// from it repeats nothing and misses nothing.
func TestWatchPeriodicBookmarks(t *testing.T) {
	h := newHarness(t)
	a := obj{ns: "ns", name: "a", uid: "a"}
	w := h.watch(WatchOptions{BookmarkEvery: 20 * time.Millisecond})
	h.waitSpec(h.put(a))
	rvA := h.get(a).RV

	// The first bookmark after a's change was delivered: one sent before it may be older.
	var bookmark string
	delivered := false
	timeout := time.After(deadline)
	for bookmark == "" {
		select {
		case c := <-w:
			switch {
			case c.Type == Bookmark && c.InitialEventsEnd:
				t.Fatal("periodic bookmark marked as the end of initial events")
			case c.Type == Bookmark && delivered:
				bookmark = c.RV
			case c.Type != Bookmark:
				delivered = true
			}
		case <-timeout:
			t.Fatalf("no bookmark within %v", deadline)
		}
	}
	at, err := parseRV(bookmark)
	if err != nil {
		t.Fatal(err)
	}
	if pa, _ := parseRV(rvA); at.spec < pa.spec || at.status < pa.status {
		t.Errorf("bookmark at %s, behind the delivered change %s", bookmark, rvA)
	}

	resumed := h.watch(WatchOptions{FromRV: bookmark})
	assertQuiet(t, resumed)
	b := obj{ns: "ns", name: "b", uid: "b"}
	h.waitSpec(h.put(b))
	if got, want := collect(t, resumed, 1), []event{{Added, "b", h.get(b).RV}}; !cmp.Equal(got, want) {
		t.Errorf("resumed from the bookmark: %+v, want %+v", got, want)
	}
}

func TestListExactRV(t *testing.T) {
	h := newHarness(t)
	seed(h, obj{ns: "ns", name: "a", uid: "a"})
	old := h.store.RV()
	if res, err := h.store.List(ListOptions{Plural: vms, ExactRV: old}); err != nil || res.RV != old {
		t.Fatalf("List(ExactRV current %s) = %s, %v", old, res.RV, err)
	}
	seed(h, obj{ns: "ns", name: "b", uid: "b"})
	if _, err := h.store.List(ListOptions{Plural: vms, ExactRV: old}); !errors.Is(err, ErrGone) {
		t.Errorf("List(ExactRV older %s) error = %v, want ErrGone", old, err)
	}
	if _, err := h.store.List(ListOptions{Plural: vms, ExactRV: "x"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("List(ExactRV x) error = %v, want ErrInvalid", err)
	}
}

func TestWaitRV(t *testing.T) {
	h := newHarness(t)
	seed(h, obj{ns: "ns", name: "a", uid: "a"})
	if err := h.store.WaitRV(t.Context(), h.store.RV()); err != nil {
		t.Errorf("WaitRV(current) error = %v", err)
	}
	if err := CheckRV("1"); !errors.Is(err, ErrInvalid) {
		t.Errorf(`CheckRV("1") error = %v, want ErrInvalid`, err)
	}
	cur, _ := parseRV(h.store.RV())
	ahead := position{spec: cur.spec + 1, status: cur.status}.String()
	done := make(chan error, 1)
	go func() { done <- h.store.WaitRV(t.Context(), ahead) }()
	select {
	case err := <-done:
		t.Fatalf("WaitRV(%s) returned %v before the read model got there", ahead, err)
	case <-time.After(50 * time.Millisecond):
	}
	seed(h, obj{ns: "ns", name: "b", uid: "b"})
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("WaitRV(%s) error = %v", ahead, err)
		}
	case <-time.After(deadline):
		t.Fatalf("WaitRV(%s) still waiting after the read model got there", ahead)
	}
}
