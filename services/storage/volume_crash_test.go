package storage

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/object"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
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

// Storage stopped while it attaches the claims of ten VMs, and started again, ends with
// each volume's disk attached once, to its own VM.
func TestAttachExactlyOnceAcrossRestart(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	if err := vc.PutObjects(t.Context(), js, "storageclasses"); err != nil {
		t.Fatal(err)
	}
	const n = 10
	vms := make([]*deploytest.VM, n)
	vcVMs := make([]*object.VirtualMachine, n)
	claims := make([]*testClaim, n)
	for i := range n {
		claims[i] = boundClaim(t, js, fmt.Sprintf("crash-%d", i), "8Gi", model.AccessModeReadWriteOnce)
		vms[i] = upgradedVM("my-namespace", fmt.Sprintf("crash-%d", i), vmSpec(claimVolume("data", claims[i].ref.Name)))
		vms[i].Put(t, js, false)
		vcVMs[i] = vms[i].Deploy(t, vc, js, inventory.PhotonImage)
	}

	stop := runStorage(t, js)
	waitFor(t, "a first disk attached", func() bool {
		for i, vm := range vcVMs {
			if len(disksOf(t, vm)[claims[i].volumeID]) > 0 {
				return true
			}
		}
		return false
	})
	stop() // in the middle of the attaches: some done, some under way, some not begun
	attachedBefore := 0
	for i, vm := range vcVMs {
		attachedBefore += len(disksOf(t, vm)[claims[i].volumeID])
	}
	t.Logf("%d of %d disks attached when storage stopped", attachedBefore, n)

	runStorage(t, js)
	for i, v := range vms {
		volumesVerified(t, js, v, "True")
		disks := disksOf(t, vcVMs[i])
		if len(disks) != 1 || len(disks[claims[i].volumeID]) != 1 {
			t.Errorf("VM %s has CNS disks %v, want exactly one of volume %s", v.Ref.Name, disks, claims[i].volumeID)
		}
	}
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
