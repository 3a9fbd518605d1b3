package storage

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// runStorage runs the service on js until the returned stop is called (or the test ends);
// stop waits for Run to return.
func runStorage(t *testing.T, js jetstream.JetStream) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{JetStream: js, VCenter: vc.Sim.Endpoint()}) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// CNS recording the attachment but the VM lacking the disk (a reconcile cut short between
// the two) ends with the disk attached once: the attachment is this VM's own.
func TestAttachAfterCNSAttachedOnly(t *testing.T) {
	js := startService(t)
	pvc := boundClaim(t, js, "half-pvc", "8Gi", model.AccessModeReadWriteOnce)
	v := upgradedVM("my-namespace", "half", vmSpec())
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	volumesVerified(t, js, v, "True")

	task, err := testCNS(t).AttachVolume(t.Context(), []cnstypes.CnsVolumeAttachDetachSpec{{VolumeId: cnstypes.CnsVolumeId{Id: pvc.volumeID}, Vm: vm.Reference()}})
	if err == nil {
		_, err = vcenter.WaitTask(t.Context(), task)
	}
	if err != nil {
		t.Fatal(err)
	}
	v.Spec.Volumes = []model.VirtualMachineVolume{claimVolume("data", "half-pvc")}
	v.Put(t, js, false)
	volumesVerified(t, js, v, "True")
	if d := disksOf(t, vm)[pvc.volumeID]; len(d) != 1 {
		t.Errorf("%d disks of the volume, want 1", len(d))
	}
}

// A removal vCenter refuses leaves the disk on the VM, VolumesVerified says so, and CNS
// still records the volume attached to it, so no other VM can attach it; once vCenter
// accepts, the volume is detached in both.
func TestRefusedDiskRemovalKeepsTheCNSAttachment(t *testing.T) {
	js := startService(t)
	pvc, v, vm := attachedClaim(t, js, "kept-pvc", "refused-removal")

	var refused atomic.Int32
	var refuse atomic.Bool
	refuse.Store(true)
	vc.Sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		req, ok := m.Body.(*types.ReconfigVM_Task)
		if !ok || m.This != vm.Reference() || !refuse.Load() || !removesDevice(req.Spec) {
			return nil, nil
		}
		refused.Add(1)
		return nil, &types.InvalidDeviceSpec{}
	})
	t.Cleanup(func() { vc.Sim.Intercept(nil) })
	v.Spec.Volumes = nil
	v.Put(t, js, false)
	volumesVerified(t, js, v, "False") // the removal's reconcile ended: nothing asks again until a change
	if refused.Load() == 0 {
		t.Fatal("the disk's removal was not refused")
	}
	if !attachedInCNS(t, pvc.volumeID, vm.Reference()) {
		t.Error("CNS does not record the volume attached to the VM that still has its disk")
	}
	if d := disksOf(t, vm)[pvc.volumeID]; len(d) != 1 {
		t.Fatalf("%d disks of the volume after the refused removal, want it still there", len(d))
	}

	refuse.Store(false)
	v.Annotations["test.vmop.dev/look-again"] = "1" // a change: looked at again (still upgraded)
	v.Put(t, js, false)
	waitFor(t, "the disk removed", func() bool { return len(disksOf(t, vm)[pvc.volumeID]) == 0 })
	waitFor(t, "CNS recording the detach", func() bool { return !attachedInCNS(t, pvc.volumeID, vm.Reference()) })
	volumesVerified(t, js, v, "True")
}

// removesDevice: spec removes a device.
func removesDevice(spec types.VirtualMachineConfigSpec) bool {
	for _, c := range spec.DeviceChange {
		if c.GetVirtualDeviceConfigSpec().Operation == types.VirtualDeviceConfigSpecOperationRemove {
			return true
		}
	}
	return false
}

// attachedInCNS tells whether CNS records the volume attached: attaching it to vm fails
// as in use. An attach that succeeds is undone, so that asking changes nothing.
func attachedInCNS(t *testing.T, id string, vm types.ManagedObjectReference) bool {
	t.Helper()
	spec := []cnstypes.CnsVolumeAttachDetachSpec{{VolumeId: cnstypes.CnsVolumeId{Id: id}, Vm: vm}}
	c := testCNS(t)
	task, err := c.AttachVolume(t.Context(), spec)
	if err == nil {
		_, err = vcenter.WaitTask(t.Context(), task)
	}
	if fault.Is(err, &types.ResourceInUse{}) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	if task, err = c.DetachVolume(t.Context(), spec); err == nil {
		_, err = vcenter.WaitTask(t.Context(), task)
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

// A disk's removal holds its volume's scope until CNS records the detach, as an attach
// holds it until the disk is added: no other VM attaches the volume between the two
// steps, neither taking the attachment still recorded for a left-over one nor having it
// cleared under it.
func TestDetachHoldsTheVolumesScope(t *testing.T) {
	js := startService(t)
	pvc, v, vm := attachedClaim(t, js, "scoped-pvc", "scoped")

	removing := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	vc.Sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		if req, ok := m.Body.(*types.ReconfigVM_Task); ok && m.This == vm.Reference() && removesDevice(req.Spec) {
			once.Do(func() { close(removing) })
			<-release
		}
		return nil, nil
	})
	t.Cleanup(func() { vc.Sim.Intercept(nil) })
	v.Spec.Volumes = nil
	v.Put(t, js, false)
	select {
	case <-removing:
	case <-t.Context().Done():
		t.Fatal("the disk's removal never reached vCenter")
	}
	leases, err := events.Leases(t.Context(), js, model.ServiceStorage)
	var holder []byte
	if err == nil {
		var e jetstream.KeyValueEntry
		if e, err = leases.Get(t.Context(), events.ScopeLeaseKey(scopeVolumes, pvc.volumeID)); err == nil {
			holder = e.Value() // empty: freed
		}
	}
	close(release)
	if len(holder) == 0 {
		t.Errorf("the volume's scope while its disk is removed: free (%v), want it held", err)
	}
	waitFor(t, "the disk removed", func() bool { return len(disksOf(t, vm)[pvc.volumeID]) == 0 })
}
