// The race detector stays off for this test (make test runs it without): it reads the VM
// while vcsim clones it, and vcsim's clone task sets the new VM's ExtraConfig without the
// lock its property collector reads under (simulator/virtual_machine.go:581 against
// property_collector.go:224), a race inside vcsim that no vmop code is part of.

//go:build !race

package placement

import (
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
)

// A create whose wait fails (its time is up while vCenter still clones, as when vCenter is
// out of reach for a moment) leaves the create recorded as running, not failed: the next
// reconcile waits for its VM instead of cloning again, and the one clone makes the one VM.
func TestCreateWhoseWaitFailedIsAwaited(t *testing.T) {
	h := newHarness(t)
	image := h.seedClassWithImage(inventory.PhotonTemplate)
	r := h.newTestReconciler()
	r.timeout = 300 * time.Millisecond // the clone takes 1.5 s
	v := newTestVM("wait-failed")
	v.image = image
	v.labels = map[string]any{model.LabelZone: "zone-a"}
	h.putVM(v, false)

	simulator.TaskDelay = simulator.DelayConfig{MethodDelay: map[string]int{"CloneVm": 1500, "LockHandoff": 0}}
	t.Cleanup(func() { simulator.TaskDelay = simulator.DelayConfig{} })
	calls := h.recordCalls(v.ref.Name)
	clones := func() int { return len(calls.copiesOf(v.ref.Name)) }

	if _, err := r.reconcile(h.ctx, h.object(v.ref)); err == nil {
		t.Fatal("the reconcile whose clone outlasted its wait succeeded")
	}
	if n := clones(); n != 1 {
		t.Fatalf("%d clones issued by the first reconcile, want 1", n)
	}
	waits := 0
	deadline := time.Now().Add(waitFor)
	for {
		res, err := r.reconcile(h.ctx, h.object(v.ref))
		if err == nil {
			if st := statusOf(t, res); !isTrue(st, model.ConditionCreated) {
				t.Fatalf("Created %+v, want True", condition(st, model.ConditionCreated))
			}
			break
		}
		if !strings.Contains(err.Error(), "has not appeared yet") || time.Now().After(deadline) {
			t.Fatalf("reconcile while the clone runs (after %d waits): %v", waits, err)
		}
		waits++
		time.Sleep(pollEvery) // poll interval of a deadline-bounded wait
	}
	if n, c := len(h.vmsOf(v.uid)), clones(); n != 1 || c != 1 {
		t.Errorf("%d VMs from %d clones, want 1 from 1", n, c)
	}
}
