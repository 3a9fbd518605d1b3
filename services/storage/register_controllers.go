package storage

import (
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// backfillControllers returns spec.hardware with every storage controller of the vSphere
// VM it lacks (by type and bus) added as the VM has it (api-rules §0.4: the upgrade
// back-fills controllers into spec.hardware), so that the back-filled volumes name
// controllers the spec has; nil when nothing is missing.
func backfillControllers(hw *model.VirtualMachineHardwareSpec, devices object.VirtualDeviceList) *model.VirtualMachineHardwareSpec {
	have := map[wantController]bool{}
	for _, w := range wanted(hw) {
		have[wantController{typ: w.typ, bus: w.bus}] = true
	}
	out := &model.VirtualMachineHardwareSpec{}
	if hw != nil {
		c := *hw
		out = &c
	}
	added := false
	for _, d := range devices {
		typ, bus, ok := controllerID(d)
		if !ok || have[wantController{typ: typ, bus: bus}] {
			continue
		}
		added = true
		switch c := d.(type) {
		case *types.VirtualIDEController:
			out.IDEControllers = append(out.IDEControllers, model.IDEControllerSpec{BusNumber: bus})
		case *types.VirtualNVMEController:
			out.NVMEControllers = append(out.NVMEControllers, model.NVMEControllerSpec{BusNumber: bus, SharingMode: nvmeSharing(c.SharedBus)})
		case types.BaseVirtualSCSIController:
			out.SCSIControllers = append(out.SCSIControllers, model.SCSIControllerSpec{
				BusNumber: bus, Type: scsiType(d), SharingMode: scsiSharingMode(c.GetVirtualSCSIController().SharedBus)})
		default: // AHCI and SATA
			out.SATAControllers = append(out.SATAControllers, model.SATAControllerSpec{BusNumber: bus})
		}
	}
	if !added {
		return nil
	}
	return out
}

func scsiType(d types.BaseVirtualDevice) model.SCSIControllerType {
	switch d.(type) {
	case *types.VirtualLsiLogicController:
		return model.SCSIControllerTypeLsiLogic
	case *types.VirtualLsiLogicSASController:
		return model.SCSIControllerTypeLsiLogicSAS
	case *types.VirtualBusLogicController:
		return model.SCSIControllerTypeBusLogic
	}
	return model.SCSIControllerTypeParaVirtual
}

// scsiSharingMode is the inverse of scsiSharing.
func scsiSharingMode(s types.VirtualSCSISharing) model.ControllerSharingMode {
	switch s {
	case types.VirtualSCSISharingPhysicalSharing:
		return model.ControllerSharingModePhysical
	case types.VirtualSCSISharingVirtualSharing:
		return model.ControllerSharingModeVirtual
	}
	return model.ControllerSharingModeNone
}

func nvmeSharing(s string) model.ControllerSharingMode {
	if s == string(types.VirtualNVMEControllerSharingPhysicalSharing) {
		return model.ControllerSharingModePhysical
	}
	return model.ControllerSharingModeNone
}
