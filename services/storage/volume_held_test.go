package storage

import (
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// A report gives up a held disk when the entry that held it now reports another volume, or
// is gone; an entry that still reports the disk (its claim unreadable) keeps it.
func TestReleasesHeld(t *testing.T) {
	spec := []model.VirtualMachineVolume{claimVolume("data", "new-pvc")}
	held := map[string]string{"old-disk": "data"}
	tests := []struct {
		name string
		rep  []model.VirtualMachineVolumeStatus
		want bool
	}{
		{"still reported with the disk", []model.VirtualMachineVolumeStatus{
			{Name: "data", Type: model.VolumeTypeManaged, Attached: true, DiskUUID: "old-disk"}}, false},
		{"the entry's new volume, not attached yet", []model.VirtualMachineVolumeStatus{
			{Name: "data", Type: model.VolumeTypeManaged, Error: "unit 1 of SCSI 0 is already taken"}}, true},
		{"the entry's new volume, attached", []model.VirtualMachineVolumeStatus{
			{Name: "data", Type: model.VolumeTypeManaged, Attached: true, DiskUUID: "new-disk"}}, true},
	}
	for _, tt := range tests {
		if got := releasesHeld(held, spec, tt.rep); got != tt.want {
			t.Errorf("%s: releasesHeld = %v, want %v", tt.name, got, tt.want)
		}
	}
	if releasesHeld(nil, spec, nil) {
		t.Error("releasesHeld with nothing held = true")
	}
}

// A disk held for an entry whose claim cannot be read goes to the entry whose claim now
// resolves to it: one disk is reported once, by the entry that names its volume.
func TestHeldDiskGoesToTheEntryThatResolvesIt(t *testing.T) {
	disk := &types.VirtualDisk{
		VirtualDevice: types.VirtualDevice{Key: 2000, Backing: &types.VirtualDiskFlatVer2BackingInfo{
			VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: "[ds] fcd/x.vmdk"}, Uuid: "x-uuid",
		}},
		CapacityInBytes: 1 << 30,
		VDiskId:         &types.ID{Id: "vol-x"},
	}
	want := []wantVolume{
		{spec: claimVolume("a", "gone-pvc"), problem: `PersistentVolumeClaim "gone-pvc" not found`, missing: true},
		{spec: claimVolume("b", "x-pvc"), cns: cnsVolume{id: "vol-x", diskPath: "[ds] fcd/x.vmdk", capacity: 1 << 30}},
	}
	rep := report(want, object.VirtualDeviceList{disk}, nil, map[string]string{"x-uuid": "a"}, nil)
	a, b := rep.volumes[0], rep.volumes[1]
	if a.Attached || a.DiskUUID != "" || a.Error == "" {
		t.Errorf("entry a: %+v, want not attached, with its claim's error", a)
	}
	if !b.Attached || b.DiskUUID != "x-uuid" || b.Error != "" {
		t.Errorf("entry b: %+v, want the disk of its volume, attached", b)
	}
}
