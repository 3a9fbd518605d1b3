package storage

import (
	"testing"

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
