package network

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// The guest watch asks for a reconcile only when a guest differs from what the VM's last
// reconcile read: never in a steady state (a reconcile per VM and poll would load vCenter
// for nothing), once after the guest changes, after a power change only for a VM with a
// readiness probe, and no more for a VM it forgot.
func TestGuestWatchRequestsOnChange(t *testing.T) {
	js := startService(t)
	// Cloud-init: a guest customization (the LinuxPrep a VM without a bootstrap gets) would
	// change the guest at power-on.
	v := deploytest.NewVM("my-namespace", "watched", model.VirtualMachineSpec{ClassName: "my-vm-class", StorageClass: "my-storage-class",
		Bootstrap: &model.VirtualMachineBootstrapSpec{CloudInit: &model.VirtualMachineBootstrapCloudInitSpec{}}})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	// The running service is done changing the VM (its adapters) before the watch under
	// test reads it.
	v.WaitStatus(t, js, model.ServiceNetwork, "the VM configured", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return st.Network != nil && st.Network.Config != nil
	})

	var mu sync.Mutex
	var requested []events.Ref
	w := newGuestWatch(vc.Client, DefaultGuestPoll, func(_ context.Context, ref events.Ref) {
		mu.Lock()
		defer mu.Unlock()
		requested = append(requested, ref)
	}, slog.Default())
	probed := false
	read := func() {
		mvm, _, err := readVM(t.Context(), vc.Client, vm.Reference().Value, "")
		if err != nil {
			t.Fatal(err)
		}
		w.observed(v.Ref, vm.Reference().Value, mvm, probed)
	}
	poll := func() int {
		if err := w.poll(t.Context()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		n := len(requested)
		requested = nil
		return n
	}

	read()
	if n := poll(); n != 0 {
		t.Errorf("%d reconciles requested for an unchanged guest", n)
	}
	setGuest(t, vm, map[string]any{"guest.ipAddress": "127.0.0.9"})
	if n := poll(); n != 1 {
		t.Errorf("%d reconciles requested after the guest changed, want 1", n)
	}
	read() // the reconcile reads the changed guest
	if n := poll(); n != 0 {
		t.Errorf("%d reconciles requested once the change was read", n)
	}
	powerOn(t, vm)
	if n := poll(); n != 0 {
		t.Errorf("%d reconciles requested after a power-on of a VM without readiness probe, want none", n)
	}
	probed = true
	read()
	if task, err := vm.PowerOff(t.Context()); err != nil || task.Wait(t.Context()) != nil {
		t.Fatalf("power off: %v", err)
	}
	if n := poll(); n != 1 {
		t.Errorf("%d reconciles requested after a probed VM powered off, want 1", n)
	}
	read()
	setGuest(t, vm, map[string]any{"guest.ipStack": types.ArrayOfGuestStackInfo{GuestStackInfo: []types.GuestStackInfo{{
		DnsConfig: &types.NetDnsConfigInfo{IpAddress: []string{"127.0.0.53"}},
	}}}})
	if n := poll(); n != 0 {
		t.Errorf("%d reconciles requested for a change of the IP stack alone, want none", n)
	}
	w.forget(v.Ref)
	setGuest(t, vm, map[string]any{"guest.hostName": "forgotten"})
	if n := poll(); n != 0 {
		t.Errorf("%d reconciles requested for a forgotten VM", n)
	}

	// A VM destroyed (its object deleted through another replica, which forgot it there)
	// is forgotten here too.
	gone := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "gone"}
	mvm, _, err := readVM(t.Context(), vc.Client, vm.Reference().Value, "")
	if err != nil {
		t.Fatal(err)
	}
	w.observed(gone, "vm-destroyed-meanwhile", mvm, false)
	if n := poll(); n != 0 {
		t.Errorf("%d reconciles requested for a destroyed VM", n)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.vms) != 0 {
		t.Errorf("the watch still holds %v after the VM was destroyed", w.vms)
	}
}
