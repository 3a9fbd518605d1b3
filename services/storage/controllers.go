package storage

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// wantController is one storage controller spec.hardware asks for.
type wantController struct {
	typ     model.ControllerType
	bus     int32
	scsi    model.SCSIControllerType // SCSI only; "" is the schema default ParaVirtual
	sharing model.ControllerSharingMode
}

func (w wantController) String() string { return fmt.Sprintf("%s %d", w.typ, w.bus) }

// wanted lists the controllers of spec.hardware.
func wanted(hw *model.VirtualMachineHardwareSpec) []wantController {
	if hw == nil {
		return nil
	}
	var out []wantController
	for _, c := range hw.IDEControllers {
		out = append(out, wantController{typ: model.ControllerTypeIDE, bus: c.BusNumber})
	}
	for _, c := range hw.NVMEControllers {
		out = append(out, wantController{typ: model.ControllerTypeNVME, bus: c.BusNumber, sharing: c.SharingMode})
	}
	for _, c := range hw.SATAControllers {
		out = append(out, wantController{typ: model.ControllerTypeSATA, bus: c.BusNumber})
	}
	for _, c := range hw.SCSIControllers {
		out = append(out, wantController{typ: model.ControllerTypeSCSI, bus: c.BusNumber, scsi: c.Type, sharing: c.SharingMode})
	}
	return out
}

// controllerID is a controller's type and bus: what identifies it in the spec and in
// the status. ok is false for devices that are not storage controllers.
func controllerID(d types.BaseVirtualDevice) (typ model.ControllerType, bus int32, ok bool) {
	switch c := d.(type) {
	case *types.VirtualIDEController:
		return model.ControllerTypeIDE, c.BusNumber, true
	case *types.VirtualAHCIController:
		return model.ControllerTypeSATA, c.BusNumber, true
	case *types.VirtualSATAController:
		return model.ControllerTypeSATA, c.BusNumber, true
	case *types.VirtualNVMEController:
		return model.ControllerTypeNVME, c.BusNumber, true
	case types.BaseVirtualSCSIController:
		return model.ControllerTypeSCSI, c.GetVirtualSCSIController().BusNumber, true
	}
	return "", 0, false
}

// missingControllers lists the controllers of spec.hardware the VM does not have, by
// type and bus. A controller that exists with another SCSI model or sharing mode counts
// as present: changing it would mean moving its disks, which this service does not do.
func missingControllers(hw *model.VirtualMachineHardwareSpec, devices []types.BaseVirtualDevice) []wantController {
	type id struct {
		typ model.ControllerType
		bus int32
	}
	have := map[id]bool{}
	for _, d := range devices {
		if typ, bus, ok := controllerID(d); ok {
			have[id{typ, bus}] = true
		}
	}
	var out []wantController
	for _, w := range wanted(hw) {
		if !have[id{w.typ, w.bus}] {
			out = append(out, w)
		}
	}
	return out
}

// device is the controller to add, with a temporary (negative) key. IDE controllers
// cannot be added (every VM has its two), so there is none for them. The PCI slot is
// left to vCenter, as for any PCI device added without one.
func (w wantController) device(key int32) (types.BaseVirtualDevice, bool) {
	ctrl := types.VirtualController{BusNumber: w.bus, VirtualDevice: types.VirtualDevice{Key: key}}
	switch w.typ {
	case model.ControllerTypeSATA:
		return &types.VirtualAHCIController{VirtualSATAController: types.VirtualSATAController{VirtualController: ctrl}}, true
	case model.ControllerTypeNVME:
		c := &types.VirtualNVMEController{VirtualController: ctrl}
		if w.sharing == model.ControllerSharingModePhysical {
			c.SharedBus = string(types.VirtualNVMEControllerSharingPhysicalSharing)
		}
		return c, true
	case model.ControllerTypeSCSI:
		// Unit 7 of every SCSI bus is the controller itself (api-rules §2).
		scsi := types.VirtualSCSIController{VirtualController: ctrl, SharedBus: scsiSharing(w.sharing), ScsiCtlrUnitNumber: 7}
		switch w.scsi {
		case model.SCSIControllerTypeBusLogic:
			return &types.VirtualBusLogicController{VirtualSCSIController: scsi}, true
		case model.SCSIControllerTypeLsiLogic:
			return &types.VirtualLsiLogicController{VirtualSCSIController: scsi}, true
		case model.SCSIControllerTypeLsiLogicSAS:
			return &types.VirtualLsiLogicSASController{VirtualSCSIController: scsi}, true
		default:
			return &types.ParaVirtualSCSIController{VirtualSCSIController: scsi}, true
		}
	}
	return nil, false
}

func scsiSharing(m model.ControllerSharingMode) types.VirtualSCSISharing {
	switch m {
	case model.ControllerSharingModePhysical:
		return types.VirtualSCSISharingPhysicalSharing
	case model.ControllerSharingModeVirtual:
		return types.VirtualSCSISharingVirtualSharing
	}
	return types.VirtualSCSISharingNoSharing
}

// controllerAdds are the device changes adding the controllers that can be added.
func controllerAdds(want []wantController) []types.BaseVirtualDeviceConfigSpec {
	var out []types.BaseVirtualDeviceConfigSpec
	for _, w := range want {
		if d, ok := w.device(int32(-1 - len(out))); ok {
			out = append(out, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: d})
		}
	}
	return out
}

func describe(want []wantController) string {
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = w.String()
	}
	return strings.Join(names, ", ")
}

// cloneHardware copies spec.hardware deeply enough for placement (model.PlaceVolumes,
// model.PlaceCdroms) to fill the copy without touching hw; nil stays nil.
func cloneHardware(hw *model.VirtualMachineHardwareSpec) *model.VirtualMachineHardwareSpec {
	if hw == nil {
		return nil
	}
	out := *hw
	out.Cdrom = make([]model.VirtualMachineCdromSpec, len(hw.Cdrom))
	for i, c := range hw.Cdrom {
		c.ControllerBusNumber, c.UnitNumber = clonePtr(c.ControllerBusNumber), clonePtr(c.UnitNumber)
		out.Cdrom[i] = c
	}
	out.IDEControllers = slices.Clone(hw.IDEControllers)
	out.NVMEControllers = slices.Clone(hw.NVMEControllers)
	out.SATAControllers = slices.Clone(hw.SATAControllers)
	out.SCSIControllers = slices.Clone(hw.SCSIControllers)
	return &out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return ptr(*p)
}
