package readmodel

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmop/vmop/pkg/events"
)

func TestFoldPutUpdateDelete(t *testing.T) {
	h := newHarness(t)
	changes := h.watch(WatchOptions{FromRV: "0.0"})
	vm := obj{ns: "ns1", name: "vm-a", uid: "u1", labels: map[string]string{"app": "web"}, spec: map[string]any{"className": "small"}}

	created := h.put(vm)
	h.waitSpec(created)
	got := h.get(vm)
	wantRV := fmt.Sprintf("%d.0", created)
	if got.RV != wantRV || got.SpecSeq != created || got.StatusSeq != 0 || got.UID != "u1" {
		t.Errorf("after create: RV %s SpecSeq %d StatusSeq %d UID %s, want %s %d 0 u1", got.RV, got.SpecSeq, got.StatusSeq, got.UID, wantRV, created)
	}
	doc := decode(t, got.JSON)
	if rv := doc["metadata"].(map[string]any)["resourceVersion"]; rv != wantRV {
		t.Errorf("metadata.resourceVersion = %v, want %s", rv, wantRV)
	}
	if _, ok := doc["status"]; ok {
		t.Errorf("object without slices has a status: %s", got.JSON)
	}
	if diff := cmp.Diff(map[string]string{"app": "web"}, got.Labels); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}

	vm.spec["className"] = "large"
	vm.deleting, vm.finalizers = true, []string{"vmoperator.vmware.com/virtualmachine"}
	updated := h.put(vm)
	h.waitSpec(updated)
	got = h.get(vm)
	if got.SpecSeq != updated || !got.DeletionRequested || !cmp.Equal(got.Finalizers, vm.finalizers) {
		t.Errorf("after update: SpecSeq %d DeletionRequested %v Finalizers %v, want %d true %v",
			got.SpecSeq, got.DeletionRequested, got.Finalizers, updated, vm.finalizers)
	}
	if class := decode(t, got.JSON)["spec"].(map[string]any)["className"]; class != "large" {
		t.Errorf("spec.className = %v, want large", class)
	}

	deleted := h.remove(vm)
	h.waitSpec(deleted)
	h.notFound(vm)

	want := []event{
		{Added, "vm-a", wantRV},
		{Modified, "vm-a", fmt.Sprintf("%d.0", updated)},
		{Deleted, "vm-a", fmt.Sprintf("%d.0", deleted)},
	}
	if diff := cmp.Diff(want, collect(t, changes, 3)); diff != "" {
		t.Errorf("watch events (-want +got):\n%s", diff)
	}
}

func TestFoldStatusSlicesMerge(t *testing.T) {
	h := newHarness(t)
	vm := obj{ns: "ns1", name: "vm-a", uid: "u1"}
	h.waitSpec(h.put(vm))

	h.status(vm, "power", "u1", false, `{"powerState":"PoweredOn","conditions":[{"type":"VirtualMachinePowered","status":"True"}]}`)
	last := h.status(vm, "placement", "u1", true,
		`{"zone":"zone-a","conditions":[{"type":"VirtualMachineCreated","status":"True"},{"type":"Ready","status":"True"}]}`)
	h.waitStatus(last)

	got := h.get(vm)
	if got.StatusSeq != last || got.RV != fmt.Sprintf("%d.%d", got.SpecSeq, last) {
		t.Errorf("StatusSeq %d RV %s, want %d and %d.%d", got.StatusSeq, got.RV, last, got.SpecSeq, last)
	}
	if diff := cmp.Diff(map[string]bool{"placement": true}, got.Released); diff != "" {
		t.Errorf("Released (-want +got):\n%s", diff)
	}
	wantStatus := map[string]any{
		"powerState": "PoweredOn",
		"zone":       "zone-a",
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
			map[string]any{"type": "VirtualMachineCreated", "status": "True"},
			map[string]any{"type": "VirtualMachinePowered", "status": "True"},
		},
	}
	if diff := cmp.Diff(wantStatus, decode(t, got.JSON)["status"]); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	// A service's new slice replaces its old one whole.
	last = h.status(vm, "power", "u1", false, `{"powerState":"PoweredOff"}`)
	h.waitStatus(last)
	status := decode(t, h.get(vm).JSON)["status"].(map[string]any)
	if status["powerState"] != "PoweredOff" || len(status["conditions"].([]any)) != 2 {
		t.Errorf("status after power's new slice = %v, want PoweredOff and placement's 2 conditions", status)
	}
}

func TestFoldSliceBeforeObject(t *testing.T) {
	h := newHarness(t)
	vm := obj{ns: "ns1", name: "early", uid: "u1"}
	statusSeq := h.status(vm, "placement", "u1", false, `{"zone":"zone-b"}`)
	h.waitStatus(statusSeq)
	h.notFound(vm)

	specSeq := h.put(vm)
	h.waitSpec(specSeq)
	got := h.get(vm)
	if want := fmt.Sprintf("%d.%d", specSeq, statusSeq); got.RV != want {
		t.Errorf("RV = %s, want %s", got.RV, want)
	}
	if zone := decode(t, got.JSON)["status"].(map[string]any)["zone"]; zone != "zone-b" {
		t.Errorf("status.zone = %v, want zone-b (the slice that waited for its object)", zone)
	}
}

func TestFoldStaleUIDSliceIgnored(t *testing.T) {
	h := newHarness(t)
	changes := h.watch(WatchOptions{})
	old := obj{ns: "ns1", name: "vm-a", uid: "old"}
	// The tombstone rolls the put up: a fold that has not read it yet would never see it.
	h.waitSpec(h.put(old))
	h.remove(old)
	vm := obj{ns: "ns1", name: "vm-a", uid: "new"}
	specSeq := h.put(vm)
	// The new incarnation folded first: a slice of the old one folded before the tombstone
	// would still (rightly) change the old object.
	h.waitSpec(specSeq)

	stale := h.status(vm, "power", "old", false, `{"powerState":"PoweredOn"}`)
	fresh := h.status(obj{ns: "ns1", name: "other", uid: "x"}, "power", "x", false, `{}`) // a later change to wait for
	h.waitStatus(fresh)

	got := h.get(vm)
	if got.RV != fmt.Sprintf("%d.0", specSeq) {
		t.Errorf("RV = %s, want %d.0: the stale slice (seq %d) must not count", got.RV, specSeq, stale)
	}
	if _, ok := decode(t, got.JSON)["status"]; ok {
		t.Errorf("stale slice merged into %s", got.JSON)
	}
	want := []event{{Added, "vm-a", ""}, {Deleted, "vm-a", ""}, {Added, "vm-a", ""}}
	gotEvents := collect(t, changes, 3)
	for i := range gotEvents {
		gotEvents[i].RV = ""
	}
	if diff := cmp.Diff(want, gotEvents); diff != "" {
		t.Errorf("watch events (-want +got):\n%s", diff)
	}
	select {
	case c := <-changes:
		t.Errorf("the stale slice caused a change: %s %s", c.Type, c.Object)
	default:
	}
}

func TestFoldRecreateKeepsNewerSlices(t *testing.T) {
	h := newHarness(t)
	old := obj{ns: "ns1", name: "vm-a", uid: "old"}
	h.waitSpec(h.put(old))
	// The STATUS fold may apply a slice of the next incarnation before SPECS reaches the
	// tombstone of the previous one: deleting must not take it along.
	h.waitStatus(h.status(old, "placement", "new", false, `{"zone":"z"}`))
	h.remove(old)
	vm := obj{ns: "ns1", name: "vm-a", uid: "new"}
	h.waitSpec(h.put(vm))
	if zone := decode(t, h.get(vm).JSON)["status"].(map[string]any)["zone"]; zone != "z" {
		t.Errorf("status.zone = %v, want z", zone)
	}
}

func TestFoldRestartContinuesFromCheckpoint(t *testing.T) {
	h := newHarness(t)
	var last uint64
	for i := range 5 {
		last = h.put(obj{ns: "ns1", name: fmt.Sprintf("vm-%d", i), uid: fmt.Sprint(i)})
	}
	h.waitSpec(last)
	if n := countChanges(t, h.store); n != 5 {
		t.Fatalf("%d changes logged, want 5", n)
	}

	h.reopen()
	if got := h.store.RV(); got != fmt.Sprintf("%d.0", last) {
		t.Errorf("RV after reopen = %s, want %d.0 (the stored checkpoint)", got, last)
	}
	next := h.put(obj{ns: "ns1", name: "vm-5", uid: "5"})
	h.waitSpec(next)
	// Re-applying the first five would log them again.
	if n := countChanges(t, h.store); n != 6 {
		t.Errorf("%d changes logged after restart, want 6", n)
	}
}

func TestCaughtUp(t *testing.T) {
	h := newHarness(t)
	vm := obj{ns: "ns1", name: "vm-a", uid: "u1"}
	specSeq := h.put(vm)
	statusSeq := h.status(vm, "power", "u1", false, `{"powerState":"PoweredOn"}`)
	h.close()

	h.path = filepath.Join(t.TempDir(), "fresh.db") // a new gateway: everything is backlog
	h.open()
	if h.store.CaughtUp() {
		t.Fatal("CaughtUp() before Fold = true")
	}
	h.fold()
	h.waitCaughtUp()
	if got, want := h.store.RV(), fmt.Sprintf("%d.%d", specSeq, statusSeq); got != want {
		t.Errorf("caught up at RV %s, want the streams' backlog %s applied", got, want)
	}
	if !h.store.CaughtUp() {
		t.Error("CaughtUp() = false after WaitCaughtUp returned")
	}
}

func TestCaughtUpWithPurgedTail(t *testing.T) {
	h := newHarness(t)
	vm := obj{ns: "ns1", name: "vm-a", uid: "u1"}
	h.status(vm, "power", "u1", false, `{"powerState":"PoweredOn"}`)
	h.close()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	// STATUS's last sequence now names a message that will never be delivered.
	if err := events.PurgeStatus(ctx, h.js, vm.ref()); err != nil {
		t.Fatal(err)
	}
	h.path = filepath.Join(t.TempDir(), "fresh.db")
	h.open()
	h.fold()
	h.waitCaughtUp() // with nothing to deliver in either stream
	if got := h.store.RV(); got != "0.0" {
		t.Errorf("RV = %s, want 0.0: nothing was left to apply", got)
	}
}

func countChanges(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.reader.Get(&n, "SELECT COUNT(*) FROM changes"); err != nil {
		t.Fatal(err)
	}
	return n
}
