package readmodel

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

func TestWatchResumeThenLiveWithoutGap(t *testing.T) {
	h := newHarness(t)
	all := h.watch(WatchOptions{}) // live from the start: the reference sequence

	var objs []obj
	for i := range 20 {
		objs = append(objs, obj{ns: "ns", name: fmt.Sprintf("vm-%02d", i), uid: fmt.Sprint(i), spec: map[string]any{"n": 0}})
	}
	seed(h, objs...)

	// Writes keep coming while the resumed watch replays and joins the live feed.
	var resumed <-chan Change
	var from position
	var lastSpec, lastStatus uint64
	for i := range 200 {
		o := objs[i%len(objs)]
		if i%2 == 0 {
			o.spec["n"] = i
			lastSpec = h.put(o)
		} else {
			lastStatus = h.status(o, "power", o.uid, false, fmt.Sprintf(`{"n":%d}`, i))
		}
		switch i {
		case 30: // resume from here...
			from, _ = parseRV(h.store.RV())
		case 60: // ...with 30 changes to replay (or to take live if the fold lags)
			resumed = h.watch(WatchOptions{FromRV: from.String()})
		}
	}
	h.waitSpec(lastSpec)
	h.waitStatus(lastStatus)

	reference := collect(t, all, 220)
	var want []event
	for _, e := range reference {
		p, err := parseRV(e.RV)
		if err != nil {
			t.Fatal(err)
		}
		if p.spec > from.spec || p.status > from.status {
			want = append(want, e)
		}
	}
	if len(want) < 169 {
		t.Fatalf("only %d changes after RV %s, want at least the 169 written after it", len(want), from)
	}
	if diff := cmp.Diff(want, collect(t, resumed, len(want))); diff != "" {
		t.Errorf("resumed watch (-want +got):\n%s", diff)
	}
	assertQuiet(t, resumed)
}

func TestWatchFromObjectRVMayRepeat(t *testing.T) {
	h := newHarness(t)
	a := obj{ns: "ns", name: "a", uid: "a"}
	b := obj{ns: "ns", name: "b", uid: "b"}
	seed(h, a, b)
	h.waitStatus(h.status(a, "power", "a", false, `{"on":true}`))
	rvA := h.get(a).RV // the last change: b's creation came before it, but at a higher SPECS seq

	got := collect(t, h.watch(WatchOptions{FromRV: rvA}), 1)
	if diff := cmp.Diff([]event{{Added, "b", h.get(b).RV}}, got); diff != "" {
		t.Errorf("watch from object RV %s (-want +got):\n%s", rvA, diff)
	}
}

// Resuming from a watch event's resourceVersion gives exactly the changes logged after the
// event: b's creation, which came before a's status change but at a higher SPECS sequence
// than a's record, is not sent again (as it is from a's version alone, above).
func TestWatchFromEventRVIsExact(t *testing.T) {
	h := newHarness(t)
	a := obj{ns: "ns", name: "a", uid: "a"}
	b := obj{ns: "ns", name: "b", uid: "b"}
	c := obj{ns: "ns", name: "c", uid: "c"}
	live := h.watch(WatchOptions{})
	seed(h, a, b)
	h.waitStatus(h.status(a, "power", "a", false, `{"on":true}`))
	var seen []Change
	timeout := time.After(deadline)
	for len(seen) < 3 {
		select {
		case ch := <-live:
			seen = append(seen, ch)
		case <-timeout:
			t.Fatalf("%d live events within %v, want 3", len(seen), deadline)
		}
	}
	last := seen[2]
	if got := eventOf(t, last); got != (event{Modified, "a", h.get(a).RV}) {
		t.Fatalf("third live event %+v, want a's status change", got)
	}
	if ObjectVersion(last.RV) == last.RV {
		t.Fatalf("event RV %s names no position beyond the object's version", last.RV)
	}

	resumed := h.watch(WatchOptions{FromRV: last.RV})
	h.waitSpec(h.put(c))
	if diff := cmp.Diff([]event{{Added, "c", h.get(c).RV}}, collect(t, resumed, 1)); diff != "" {
		t.Errorf("watch from event RV %s (-want +got):\n%s", last.RV, diff)
	}
}

func TestWatchGone(t *testing.T) {
	h := newHarness(t, WithChangeLogSize(3))
	var rvs []string
	for i := range 6 {
		o := obj{ns: "ns", name: fmt.Sprintf("vm-%d", i), uid: fmt.Sprint(i)}
		h.waitSpec(h.put(o))
		rvs = append(rvs, h.get(o).RV)
	}
	ctx := t.Context()
	for _, rv := range []string{"0.0", rvs[0], rvs[1]} {
		if _, err := h.store.Watch(ctx, WatchOptions{Plural: vms, FromRV: rv}); !errors.Is(err, ErrGone) {
			t.Errorf("Watch(FromRV %s) error = %v, want ErrGone (log keeps the last 3 of 6)", rv, err)
		}
	}
	got := collect(t, h.watch(WatchOptions{FromRV: rvs[2]}), 3)
	want := []event{{Added, "vm-3", rvs[3]}, {Added, "vm-4", rvs[4]}, {Added, "vm-5", rvs[5]}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watch from the oldest kept RV (-want +got):\n%s", diff)
	}
}

func TestWatchLabelSelectorTransitions(t *testing.T) {
	h := newHarness(t)
	w := h.watch(WatchOptions{Label: labels.SelectorFromSet(labels.Set{"app": "web"})})
	vm := obj{ns: "ns", name: "vm", uid: "u"}
	steps := []struct {
		labels map[string]string
		want   string // "" = not seen
	}{
		{nil, ""},
		{map[string]string{"app": "web"}, Added},
		{map[string]string{"app": "web", "x": "y"}, Modified},
		{map[string]string{"app": "db"}, Deleted},
		{map[string]string{"app": "db", "x": "z"}, ""},
		{map[string]string{"app": "web"}, Added},
	}
	var want []string
	for _, s := range steps {
		vm.labels = s.labels
		h.waitSpec(h.put(vm))
		if s.want != "" {
			want = append(want, s.want)
		}
	}
	h.waitSpec(h.remove(vm))
	want = append(want, Deleted)

	var got []string
	for _, e := range collect(t, w, len(want)) {
		got = append(got, e.Type)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	assertQuiet(t, w)
}

func TestWatchInitialEvents(t *testing.T) {
	h := newHarness(t)
	seed(h,
		obj{ns: "b", name: "web-1", uid: "1", labels: map[string]string{"app": "web"}},
		obj{ns: "a", name: "web-2", uid: "2", labels: map[string]string{"app": "web"}},
		obj{ns: "a", name: "db", uid: "3", labels: map[string]string{"app": "db"}},
	)
	rv := h.store.RV()
	w := h.watch(WatchOptions{SendInitial: true, InitialEventsEnd: true, Label: labels.SelectorFromSet(labels.Set{"app": "web"})})
	got := collect(t, w, 3)
	want := []event{
		{Added, "web-2", h.get(obj{ns: "a", name: "web-2"}).RV},
		{Added, "web-1", h.get(obj{ns: "b", name: "web-1"}).RV},
		{Bookmark, "", rv},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("initial events (-want +got):\n%s", diff)
	}

	h.waitSpec(h.put(obj{ns: "c", name: "web-3", uid: "4", labels: map[string]string{"app": "web"}}))
	if got := collect(t, w, 1); got[0].Name != "web-3" || got[0].Type != Added {
		t.Errorf("live event after the initial ones = %+v, want web-3 ADDED", got[0])
	}
	assertQuiet(t, w)
}

func TestWatchSlowWatcherIsClosed(t *testing.T) {
	h := newHarness(t, WithWatchBuffer(2))
	w := h.watch(WatchOptions{})
	var last uint64
	for i := range 8 {
		last = h.put(obj{ns: "ns", name: fmt.Sprintf("vm-%d", i), uid: fmt.Sprint(i)})
	}
	h.waitSpec(last) // the fold went on although nobody read the watch

	received := 0
	timeout := time.After(deadline)
	for {
		select {
		case _, ok := <-w:
			if !ok {
				if received >= 8 {
					t.Errorf("watch delivered all %d changes, want it closed on overflow", received)
				}
				return
			}
			received++
		case <-timeout:
			t.Fatalf("overflowed watch not closed within %v (%d events read)", deadline, received)
		}
	}
}

func TestWatchErrors(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name string
		opts WatchOptions
		want error
	}{
		{"malformed RV", WatchOptions{Plural: vms, FromRV: "12"}, ErrInvalid},
		{"non-numeric RV", WatchOptions{Plural: vms, FromRV: "a.b"}, ErrInvalid},
		{"three parts", WatchOptions{Plural: vms, FromRV: "1.2.3"}, ErrInvalid},
		{"event logged before its version", WatchOptions{Plural: vms, FromRV: "5.5.4.5"}, ErrInvalid},
		{"unsupported field", WatchOptions{Plural: vms, Fields: fields.OneTermEqualSelector("status.phase", "x")}, ErrInvalid},
		{"no plural", WatchOptions{}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := h.store.Watch(t.Context(), tt.opts); !errors.Is(err, tt.want) {
				t.Errorf("Watch(%+v) error = %v, want %v", tt.opts, err, tt.want)
			}
		})
	}
}

func TestWatchEndsWithContext(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := h.store.Watch(ctx, WatchOptions{Plural: vms})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case _, ok := <-w:
		if ok {
			t.Error("watch delivered an event after its context ended")
		}
	case <-time.After(deadline):
		t.Fatal("watch channel not closed after its context ended")
	}
}

// assertQuiet fails if a watch holds an event nobody expected. Everything the test caused
// was folded before, and the hub delivers before the fold moves on, so a pending extra
// event would already be queued.
func assertQuiet(t *testing.T, w <-chan Change) {
	t.Helper()
	select {
	case c, ok := <-w:
		if ok {
			t.Errorf("unexpected extra watch event %s %s", c.Type, c.Object)
		}
	case <-time.After(50 * time.Millisecond):
	}
}
