package storage

import (
	"context"
	"encoding/json"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// placeAttached back-fills the placement of claim volumes that have none in the spec
// but whose first-class disk is attached (api-rules §0.4: device placement), from the
// disk's controller and unit. It returns vols changed, or nil when nothing was placed.
func (r *registrar) placeAttached(ctx context.Context, vm *model.VirtualMachine, vols []model.VirtualMachineVolume, devices object.VirtualDeviceList) ([]model.VirtualMachineVolume, error) {
	var out []model.VirtualMachineVolume
	for i, v := range vols {
		if v.PersistentVolumeClaim == nil || (v.ControllerType != "" && v.ControllerBusNumber != nil && v.UnitNumber != nil) {
			continue
		}
		rec, err := readOwned(ctx, r.js, events.Ref{Plural: pluralClaims, Namespace: vm.Namespace, Name: v.PersistentVolumeClaim.ClaimName})
		if err != nil {
			return nil, err
		}
		var claim model.PersistentVolumeClaim
		if !rec.live || json.Unmarshal(rec.body, &claim) != nil || claim.Spec.VolumeName == "" {
			continue
		}
		for _, dev := range devices.SelectByType((*types.VirtualDisk)(nil)) {
			disk := dev.(*types.VirtualDisk)
			if disk.VDiskId == nil || disk.VDiskId.Id != claim.Spec.VolumeName || disk.UnitNumber == nil {
				continue
			}
			typ, bus, ok := controllerID(devices.FindByKey(disk.ControllerKey))
			if !ok {
				continue
			}
			if out == nil {
				out = append([]model.VirtualMachineVolume(nil), vols...)
			}
			out[i].ControllerType, out[i].ControllerBusNumber, out[i].UnitNumber = typ, ptr(bus), ptr(*disk.UnitNumber)
		}
	}
	return out, nil
}
