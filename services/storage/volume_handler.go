package storage

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// syncVolumes is the VM loop's call into the managed volumes (volume.go): it attaches,
// grows and detaches them and returns what to report, and the VM as it is afterwards.
func (h *handler) syncVolumes(ctx context.Context, o reconcile.Object, vm model.VirtualMachine, vcVM *object.VirtualMachine, mvm mo.VirtualMachine) (volumeReport, mo.VirtualMachine, error) {
	return h.volumes.sync(ctx, o.Ref, vm, reportedDisks(o.Slices[model.ServiceStorage]), h.readClaim, vcVM, mvm)
}

// volumeRecord is what the VM loop notes with its slice (events.Slice.Record) for its
// next pass: the disks its report gave to spec.volumes entries, disk UUID → entry name.
// The status cannot tell them apart from the image's unregistered disks: an image disk's
// entry is Classic whatever the user named it (seed, Volume Type in Status).
type volumeRecord struct {
	Disks map[string]string `json:"disks,omitempty"`
}

// reportedDisks are the disks the VM loop's last report gave to entries of spec.volumes:
// disk UUID → entry name. A slice published before the record existed tells them by
// type: Managed, or Classic under the registration's name.
func reportedDisks(prev events.Slice) map[string]string {
	out := map[string]string{}
	var rec volumeRecord
	if len(prev.Record) > 0 {
		if err := json.Unmarshal(prev.Record, &rec); err == nil {
			maps.Copy(out, rec.Disks)
			return out
		}
	}
	var old struct {
		Volumes []model.VirtualMachineVolumeStatus `json:"volumes"`
	}
	_ = json.Unmarshal(prev.Status, &old) // unreadable: no disk is held for an unreadable claim
	for _, v := range old.Volumes {
		if (v.Type == model.VolumeTypeManaged || v.Name == imageDiskName(v.DiskUUID)) && v.Attached && v.DiskUUID != "" {
			out[v.DiskUUID] = v.Name
		}
	}
	return out
}

// specDisks are the disks of a report's entries for spec.volumes (volumeReport.volumes):
// disk UUID → entry name.
func specDisks(vols []model.VirtualMachineVolumeStatus) map[string]string {
	out := map[string]string{}
	for _, v := range vols {
		if v.Attached && v.DiskUUID != "" {
			out[v.DiskUUID] = v.Name
		}
	}
	return out
}

// condition sets VirtualMachineHardwareVolumesVerified: True when every volume of the
// spec is attached as asked and no removed one is left.
func (r volumeReport) condition(conds *reconcile.ConditionSet) {
	if len(r.problems) == 0 {
		conds.Set(model.ConditionHardwareVolumesVerified, metav1.ConditionTrue, "", "")
		return
	}
	conds.Set(model.ConditionHardwareVolumesVerified, metav1.ConditionFalse, model.ReasonHardwareVolumesMismatch, joinMessages(r.problems...))
}
