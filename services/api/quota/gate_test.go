package quota

import (
	"context"
	"testing"

	"github.com/vmop/vmop/pkg/model"
)

var vmKind = model.Kind{Kind: "VirtualMachine"}

// A write's hold on its namespace is taken only when asked (Take), once however often it
// is asked, and let go by its own release alone; a write that never took it lets nothing
// go, and a context without a hold takes nothing.
func TestDeferredHold(t *testing.T) {
	g := NewGate()
	held := func() bool {
		m := g.namespaces["ns"]
		if m == nil || m.TryLock() {
			if m != nil {
				m.Unlock()
			}
			return false
		}
		return true
	}
	charging, releaseCharging := g.Defer(t.Context(), vmKind, "ns")
	_, releaseOther := g.Defer(t.Context(), vmKind, "ns")
	if held() {
		t.Fatal("held before any write took it")
	}
	Take(charging)
	Take(charging) // admission retried: still one hold
	if !held() {
		t.Fatal("not held once the charging write took it")
	}
	releaseOther() // a write that charges nothing more: it never took the hold
	if !held() {
		t.Fatal("a write that never took the hold let the charging write's go")
	}
	releaseCharging()
	if held() {
		t.Fatal("still held once the charging write let it go")
	}
	releaseCharging() // a second release is no unlock of another write's hold
	Take(context.Background())
	if held() {
		t.Fatal("a context without a hold took one")
	}
}
