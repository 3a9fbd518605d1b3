package storage

import (
	"reflect"
	"slices"

	"github.com/vmop/vmop/pkg/model"
)

// backfillCdroms completes the placement of the CD-ROMs of spec.hardware (hw when the
// upgrade already changed it) by D19, as the gateway places them on an upgraded VM's
// update, counting the volumes' units (vols, with the back-filled image disks) as taken;
// a SATA controller it needs is added to spec.hardware, and so to the VM. It returns the
// hardware changed, or hw as it was when there is nothing to place or no room for it.
func backfillCdroms(spec model.VirtualMachineSpec, hw *model.VirtualMachineHardwareSpec, vols []model.VirtualMachineVolume) *model.VirtualMachineHardwareSpec {
	base := hw
	if base == nil {
		base = spec.Hardware
	}
	if base == nil || !slices.ContainsFunc(base.Cdrom, func(c model.VirtualMachineCdromSpec) bool {
		return c.ControllerType == "" || c.ControllerBusNumber == nil || c.UnitNumber == nil
	}) {
		return hw
	}
	s := model.VirtualMachineSpec{Hardware: cloneHardware(base), Volumes: vols}
	model.PlaceCdroms(&s)
	if reflect.DeepEqual(s.Hardware, base) {
		return hw // nothing could be placed: the spec stays, and VirtualMachineHardwareCDROMVerified says why
	}
	return s.Hardware
}
