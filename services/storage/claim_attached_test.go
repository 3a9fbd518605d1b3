package storage

import (
	"slices"
	"strings"
	"testing"

	"github.com/vmware/govmomi/cns"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
)

// A claim whose volume's disk is still attached to a vSphere VM (no spec names it: the
// detach has not happened yet) is held like one a VM names; once the disk is removed, the
// volume is deleted and the claim released.
func TestClaimDeletionWaitsForAttachedDisk(t *testing.T) {
	js := startService(t)
	c := newPVCFixture("attached", "1Gi", "my-storage-class")
	c.put(t, js)
	c.waitBound(t, js)
	_, stored := c.stored(t, js)

	cc, err := cns.NewClient(t.Context(), vc.Client.Client)
	if err != nil {
		t.Fatal(err)
	}
	path, err := (&volumes{vc: vc.Client, cns: cc}).diskPath(t.Context(), stored.Spec.VolumeName)
	if err != nil || path == "" {
		t.Fatalf("disk path of volume %s: %q (%v)", stored.Spec.VolumeName, path, err)
	}
	// Upgraded already: its image disk is not registered, so the VM's own loop leaves the
	// disk this test attaches alone (it names no volume in vDiskId).
	v := upgradedVM("my-namespace", "attacher", model.VirtualMachineSpec{StorageClass: "my-storage-class"})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	disk := attachDisk(t, vm, path)

	c.markDeleting()
	c.put(t, js)
	_, st := c.wait(t, js, "the InUse condition", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool {
		return slices.ContainsFunc(st.Conditions, func(cd model.PersistentVolumeClaimCondition) bool { return cd.Type == conditionInUse })
	})
	if msg := st.Conditions[0].Message; !strings.Contains(msg, "vSphere VM attacher") {
		t.Errorf("InUse message %q does not name the VM the disk is attached to", msg)
	}
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 1 {
		t.Fatalf("CNS volumes of a claim in use: %d, want 1", n)
	}

	if err := vm.RemoveDevice(t.Context(), true, disk); err != nil {
		t.Fatal(err)
	}
	c.waitReleased(t, js)
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 0 {
		t.Errorf("CNS volumes left: %d", n)
	}
}

// attachDisk adds a disk backed by the file at path to the VM, as attaching a volume does.
func attachDisk(t *testing.T, vm *object.VirtualMachine, path string) types.BaseVirtualDevice {
	t.Helper()
	devices, err := vm.Device(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := devices.FindDiskController("scsi")
	if err != nil {
		t.Fatal(err)
	}
	disk := devices.CreateDisk(ctrl, types.ManagedObjectReference{}, path)
	if err := vm.AddDevice(t.Context(), disk); err != nil {
		t.Fatal(err)
	}
	devices, err = vm.Device(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		if b, ok := d.(*types.VirtualDisk).Backing.(*types.VirtualDiskFlatVer2BackingInfo); ok && b.FileName == path {
			return d
		}
	}
	t.Fatalf("no disk backed by %s after the reconfigure", path)
	return nil
}
