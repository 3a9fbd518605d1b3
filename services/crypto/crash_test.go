// The race detector stays off for this test: it runs 8 disk-encrypting reconfigures of
// different VMs at once, and vcsim's reconfigure reads a datastore's fields without the
// lock another reconfigure writes them under (simulator/datastore.go:74 against
// virtual_machine.go:1777), a race inside vcsim that no vmop code is part of.

//go:build !race

package crypto

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// Killing the service while it encrypts 10 VMs, and starting it again, ends with every VM
// encrypted by exactly one reconfigure: the restarted service awaits the reconfigures
// still running in vCenter instead of starting them again.
func TestCrashDuringEncryption(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	if err := vc.PutObjects(t.Context(), js, seeded...); err != nil {
		t.Fatal(err)
	}
	const n = 10
	vs := make([]*deploytest.VM, n)
	vms := make([]*object.VirtualMachine, n)
	for i := range vs {
		vs[i] = deploytest.NewVM("my-namespace", fmt.Sprintf("crash-%d", i), model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class"})
		vs[i].Put(t, js, false)
		vms[i] = vs[i].Deploy(t, vc, js, inventory.PhotonImage)
	}

	// Reconfigures take long enough for the kill to find some running, also under -race.
	simulator.TaskDelay = simulator.DelayConfig{MethodDelay: map[string]int{"ReconfigVm": 1500, "LockHandoff": 0}}
	t.Cleanup(func() { simulator.TaskDelay = simulator.DelayConfig{} })

	ctx, kill := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, js) }()
	waitFor(t, "a running encryption", func() bool { return anyRunningTask(t, vms) })
	kill()
	if err := <-done; err != nil {
		t.Fatalf("killed service: %v", err)
	}
	if !anyRunningTask(t, vms) {
		t.Fatal("no reconfigure left running at the kill: the test proves nothing")
	}

	restarted := make(chan error, 1)
	ctx, stop := context.WithCancel(t.Context())
	go func() { restarted <- run(ctx, js) }()
	t.Cleanup(func() {
		stop()
		if err := <-restarted; err != nil {
			t.Errorf("restarted service: %v", err)
		}
	})
	for i, v := range vs {
		st := synced(t, js, v, 1, "True", "")
		expectKey(t, vms[i], inventory.KeyProvider, st.Crypto.KeyID)
		if got := cryptoReconfigures[*types.CryptoSpecEncrypt](t, vms[i]); got != 1 {
			t.Errorf("%s: encrypted by %d reconfigures, want 1", v.Ref.Name, got)
		}
	}
}

// anyRunningTask tells whether one of vms has a queued or running task.
func anyRunningTask(t *testing.T, vms []*object.VirtualMachine) bool {
	t.Helper()
	for _, vm := range vms {
		var mvm mo.VirtualMachine
		if err := vm.Properties(t.Context(), vm.Reference(), []string{"recentTask"}, &mvm); err != nil {
			t.Fatal(err)
		}
		for _, ref := range mvm.RecentTask {
			var task mo.Task
			if err := vm.Properties(t.Context(), ref, []string{"info.state"}, &task); err != nil {
				continue // gone since
			}
			if s := task.Info.State; s == types.TaskInfoStateQueued || s == types.TaskInfoStateRunning {
				return true
			}
		}
	}
	return false
}

// waitFor polls ok until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s before the deadline", what)
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}
