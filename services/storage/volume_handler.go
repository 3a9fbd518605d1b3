package storage

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// syncVolumes is the VM loop's call into the managed volumes (volume.go): it attaches,
// grows and detaches them and returns what to report, and the VM as it is afterwards.
func (h *handler) syncVolumes(ctx context.Context, o reconcile.Object, vm model.VirtualMachine, vcVM *object.VirtualMachine, mvm mo.VirtualMachine) (volumeReport, mo.VirtualMachine, error) {
	return h.volumes.sync(ctx, o.Ref, vm, previousRecord(o.Slices[model.ServiceStorage]), h.readClaim, vcVM, mvm)
}

// volumeRecord is what the VM loop notes with its slice (events.Slice.Record) for its
// next pass, about disks the status cannot tell apart from the image's unregistered ones
// (an image disk's entry is Classic whatever the user named it): disk UUID → entry name.
type volumeRecord struct {
	// Disks are the disks the report gave to spec.volumes entries.
	Disks map[string]string `json:"disks,omitempty"`
	// Leaving are disks an earlier report gave to entries that the VM still has, though no
	// entry reports them now (a removal vCenter refused, an IDE disk of a running VM): the
	// next pass removes them still.
	Leaving map[string]string `json:"leaving,omitempty"`
	// Classic are the disks the report called Classic (an image's): an entry whose claim
	// cannot be read keeps its disk (Disks) and that type, which says where the disk came
	// from.
	Classic map[string]bool `json:"classic,omitempty"`
}

// classic tells whether the last report called the disk of the entry named Classic.
func (r volumeRecord) classic(entry string) bool {
	for uuid, name := range r.Disks {
		if name == entry && r.Classic[uuid] {
			return true
		}
	}
	return false
}

// previousRecord is the record of the VM loop's last report. A slice published before
// the record existed tells its entries' disks by type: Managed, or Classic under the
// registration's name.
func previousRecord(prev events.Slice) volumeRecord {
	var rec volumeRecord
	if len(prev.Record) > 0 && json.Unmarshal(prev.Record, &rec) == nil {
		return rec
	}
	rec = volumeRecord{Disks: map[string]string{}}
	var old struct {
		Volumes []model.VirtualMachineVolumeStatus `json:"volumes"`
	}
	_ = json.Unmarshal(prev.Status, &old) // unreadable: no disk is held for an unreadable claim
	for _, v := range old.Volumes {
		if (v.Type == model.VolumeTypeManaged || v.Name == imageDiskName(v.DiskUUID)) && v.Attached && v.DiskUUID != "" {
			rec.Disks[v.DiskUUID] = v.Name
		}
	}
	return rec
}

// reported are the disks an earlier report gave to entries, still on the VM then.
func (r volumeRecord) reported() map[string]string {
	out := map[string]string{}
	maps.Copy(out, r.Leaving)
	maps.Copy(out, r.Disks)
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

// nextRecord is the record of a pass that reported vols on a VM that now has devices,
// the earlier reports' disks being reported: those the VM still has and no entry reports
// are still leaving.
func nextRecord(reported map[string]string, vols []model.VirtualMachineVolumeStatus, devices object.VirtualDeviceList) volumeRecord {
	rec := volumeRecord{Disks: specDisks(vols)}
	for _, v := range vols {
		if v.Attached && v.DiskUUID != "" && v.Type == model.VolumeTypeClassic {
			if rec.Classic == nil {
				rec.Classic = map[string]bool{}
			}
			rec.Classic[v.DiskUUID] = true
		}
	}
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		uuid := vcenter.BackingOf(d.(*types.VirtualDisk)).UUID
		name, was := reported[uuid]
		if _, is := rec.Disks[uuid]; was && !is {
			if rec.Leaving == nil {
				rec.Leaving = map[string]string{}
			}
			rec.Leaving[uuid] = name
		}
	}
	return rec
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
