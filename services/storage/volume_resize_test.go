package storage

import (
	"testing"

	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// On a powered-on VM a claim is hot-added; growing the claim from 8Gi to 12Gi, the claim
// first and its CNS volume after (as the claim loop extends it), grows the attached disk
// in vcsim while the VM stays on.
func TestHotAddAndOnlineResize(t *testing.T) {
	js := startService(t)
	pvc := boundClaim(t, js, "grow-pvc", "8Gi", model.AccessModeReadWriteOnce)
	v := upgradedVM("my-namespace", "running", vmSpec())
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	task, err := vm.PowerOn(t.Context())
	if err == nil {
		_, err = vcenter.WaitTask(t.Context(), task)
	}
	if err != nil {
		t.Fatal(err)
	}
	volumesVerified(t, js, v, "True")

	v.Spec.Volumes = []model.VirtualMachineVolume{claimVolume("data", "grow-pvc")}
	v.Put(t, js, false)
	volumesVerified(t, js, v, "True")
	if d := disksOf(t, vm)[pvc.volumeID]; len(d) != 1 || d[0].CapacityInBytes != 8<<30 {
		t.Fatalf("hot-added disks %+v, want one of 8 GiB", d)
	}

	pvc.size = "12Gi"
	pvc.put(t, js)
	task, err = testCNS(t).ExtendVolume(t.Context(), []cnstypes.CnsVolumeExtendSpec{{VolumeId: cnstypes.CnsVolumeId{Id: pvc.volumeID}, CapacityInMb: mib("12Gi")}})
	if err == nil {
		_, err = vcenter.WaitTask(t.Context(), task)
	}
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the disk grown to 12 GiB", func() bool {
		d := disksOf(t, vm)[pvc.volumeID]
		return len(d) == 1 && d[0].CapacityInBytes == 12<<30
	})
	_, st := v.WaitStatus(t, js, "storage", "limit 12Gi", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s := volumeStatus(st, "data")
		return s != nil && s.Limit != nil && s.Limit.String() == "12Gi"
	})
	if s := volumeStatus(st, "data"); s.Requested.String() != "12Gi" || !s.Attached {
		t.Errorf("status of data %+v, want attached, requested 12Gi", s)
	}
	if state, err := vm.PowerState(t.Context()); err != nil || state != types.VirtualMachinePowerStatePoweredOn {
		t.Errorf("power state %s (%v), want the VM on throughout", state, err)
	}
}
