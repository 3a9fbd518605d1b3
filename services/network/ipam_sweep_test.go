package network

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// The claims a lost lease landed after the VM's deletion released its claims are
// released by the sweep once the VM's object is gone: a claim with its record entry made
// again, and a claim whose record the release had deleted. The claims of VMs that exist,
// being deleted or not, stay.
func TestSweepReleasesTheClaimsOfDeletedVMs(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	kv, err := events.IPAM(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	a := &allocator{kv: kv}
	vm := func(name, uid, extra string) (events.Ref, uint64) {
		ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: name}
		body := fmt.Appendf(nil, `{"metadata":{"name":%q,"namespace":"ns","uid":%q%s}}`, name, uid, extra)
		seq, err := events.AppendSpec(ctx, js, ref, events.OpPut, body, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ref, seq
	}
	claim := func(key, holder string) {
		if ok, err := a.take(ctx, key, holder); err != nil || !ok {
			t.Fatalf("claim %s for %s: %v %v", key, holder, ok, err)
		}
	}
	vm("a", "vm-a", "")
	vm("d", "vm-d", `,"deletionTimestamp":"2026-11-27T00:00:00Z"`)
	gone, seq := vm("b", "vm-b", "")
	claim("10.0.0.2", "vm-a/eth0")
	claim("10.0.0.6", "vm-d/eth0")
	claim("10.0.0.3", "vm-b/eth0")
	if err := a.release(ctx, "vm-b"); err != nil { // b's deletion
		t.Fatal(err)
	}
	claim("10.0.0.4", "vm-b/eth1") // a lost lease's claim after the release: recorded again
	if _, err := kv.Create(ctx, "10.0.0.5", []byte("vm-b/eth2")); err != nil {
		t.Fatal(err) // one whose record entry the release deleted
	}
	if _, err := events.AppendSpec(ctx, js, gone, events.OpDelete, nil, seq, nil); err != nil {
		t.Fatal(err)
	}

	// A claim of a VM the sweep does not show, written after the time it is given, stays:
	// a lagging replica may not show a VM just created.
	cutoff := time.Now()
	claim("10.0.0.8", "vm-new/eth0")

	removed, err := a.sweep(ctx, js, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 3 {
		t.Errorf("sweep removed %d keys, want 3 (two claims and the record of vm-b)", removed)
	}
	for key, want := range map[string]string{
		"10.0.0.2": "vm-a/eth0", heldKey("vm-a"): "10.0.0.2", "10.0.0.6": "vm-d/eth0", heldKey("vm-d"): "10.0.0.6",
		"10.0.0.3": "", "10.0.0.4": "", "10.0.0.5": "", heldKey("vm-b"): "",
		"10.0.0.8": "vm-new/eth0", heldKey("vm-new"): "10.0.0.8",
	} {
		if got := value(t, kv, key); got != want {
			t.Errorf("%s = %q after the sweep, want %q", key, got, want)
		}
	}
	if removed, err := a.sweep(ctx, js, cutoff); err != nil || removed != 0 {
		t.Errorf("second sweep: removed %d, %v; want nothing", removed, err)
	}

	// A VM record whose uid cannot be read stops the sweep: its VM's claims must not look
	// abandoned.
	claim("10.0.0.7", "vm-e/eth0")
	vm("e", "", "")
	if removed, err := a.sweep(ctx, js, time.Now()); err == nil || removed != 0 {
		t.Errorf("sweep with an unreadable VM: removed %d, %v; want an error and nothing removed", removed, err)
	}
}

// value is key's value in kv, "" when it has none.
func value(t *testing.T, kv jetstream.KeyValue, key string) string {
	t.Helper()
	e, err := kv.Get(t.Context(), key)
	if err != nil {
		return ""
	}
	return string(e.Value())
}
