package storage

import (
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// A registration that cannot finish (the second disk's claim is bound to a volume of its
// own) leaves the first disk registered as a claim while its entry does not name it yet:
// the claim charges that disk (quota counts claims), so status.storage charges only the
// disk no claim has.
func TestStuckRegistrationChargesEachDiskOnce(t *testing.T) {
	js := startService(t)
	image := multiDiskImage(t, js)
	c := newPVCFixture("bound-data-before", "1Gi", "my-storage-class")
	c.put(t, js)
	c.waitBound(t, js)
	v := imageDiskVM("stuck-registration", &image, atSCSI0("os-disk", 0, ""), atSCSI0("data-disk", 1, c.Ref.Name))
	v.Put(t, js, false)
	v.Deploy(t, vc, js, inventory.MultiDiskImage)
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "the registration refused, the first disk's claim made", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		_, reason := deploytest.Condition(st, model.ConditionUnmanagedVolumesRegistered)
		return reason == reasonRegistrationFailed && st.Storage != nil && st.Storage.Requested != nil
	})
	if claim := readObject[model.PersistentVolumeClaim](t, js, pluralClaims, "os-disk"); claim.Spec.VolumeName == "" {
		t.Fatalf("the first disk's claim: %+v, want it made and bound", claim.Spec)
	}
	var second *model.VirtualMachineVolumeStatus
	for i, vol := range st.Volumes {
		if vol.Type == model.VolumeTypeClassic && vol.UnitNumber != nil && *vol.UnitNumber == 1 {
			second = &st.Volumes[i]
		}
	}
	if second == nil {
		t.Fatalf("status.volumes %+v: no Classic entry of the second disk", st.Volumes)
	}
	if got := st.Storage.Requested.Disks; got.Cmp(*second.Requested) != 0 {
		t.Errorf("status.storage requests %s for disks, want the second disk's %s alone: the first one's claim charges it", got.String(), second.Requested.String())
	}
}
