package storage

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// Controllers after create (api-rules §7.7, CTL-1..9). Before the schema upgrade
// spec.hardware does not list the image's controllers yet, so the service only adds the
// ones it names. Once the VM is upgraded spec.hardware is the whole truth: a controller it
// no longer lists is removed, one whose SCSI type or sharing mode changed is changed.
// Devices are never moved nor dropped: a controller that holds any is neither removed nor
// retyped (admission's CTL-3 already refuses to drop the controller of a listed volume),
// and the condition says why. Removing, retyping and resharing wait for the VM to be off,
// as vSphere hot-plugs only the addition of controllers.

// controllerPlan is one reconfigure bringing the VM's controllers in line with the spec,
// and the changes it cannot make, each with its reason.
type controllerPlan struct {
	changes []types.BaseVirtualDeviceConfigSpec
	refused []string
}

// planControllers compares the VM's controllers with spec.hardware.
func planControllers(hw *model.VirtualMachineHardwareSpec, devices object.VirtualDeviceList, upgraded, poweredOff bool) controllerPlan {
	type id struct {
		typ model.ControllerType
		bus int32
	}
	want := map[id]wantController{}
	for _, w := range wanted(hw) {
		want[id{w.typ, w.bus}] = w
	}
	var plan controllerPlan
	var adds []wantController
	have := map[id]bool{}
	for _, d := range devices {
		typ, bus, ok := controllerID(d)
		if !ok {
			continue
		}
		have[id{typ, bus}] = true
		w, listed := want[id{typ, bus}]
		if !upgraded || typ == model.ControllerTypeIDE { // every VM has both IDE controllers (CTL-1)
			continue
		}
		held := heldDevices(devices, d)
		name := fmt.Sprintf("%s controller %d", typ, bus)
		switch {
		case !listed:
			if why := blockedReason(name+" is not in spec.hardware", held, poweredOff); why != "" {
				plan.refused = append(plan.refused, why)
				continue
			}
			plan.changes = append(plan.changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: d})
		case typ == model.ControllerTypeSCSI && scsiType(d) != scsiModel(w.scsi):
			what := fmt.Sprintf("%s is %s, spec.hardware asks for %s", name, scsiType(d), scsiModel(w.scsi))
			if why := blockedReason(what, held, poweredOff); why != "" {
				plan.refused = append(plan.refused, why)
				continue
			}
			plan.changes = append(plan.changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: d})
			adds = append(adds, w)
		case sharingOf(d) != sharingModel(w.sharing):
			if !poweredOff {
				plan.refused = append(plan.refused, fmt.Sprintf("the sharing mode of %s changes to %s once the VM is powered off", name, sharingModel(w.sharing)))
				continue
			}
			plan.changes = append(plan.changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: reshared(d, w.sharing)})
		}
	}
	for _, w := range wanted(hw) {
		if !have[id{w.typ, w.bus}] {
			adds = append(adds, w)
		}
	}
	plan.changes = append(plan.changes, controllerAdds(adds)...)
	return plan
}

// blockedReason is why a controller cannot be removed or replaced now ("" when it can): it
// holds devices, which stay where they are, or the VM is on.
func blockedReason(what string, held []string, poweredOff bool) string {
	switch {
	case len(held) > 0:
		return fmt.Sprintf("%s, but it holds %s: it stays as it is, devices are never moved", what, strings.Join(held, ", "))
	case !poweredOff:
		return what + ": applied once the VM is powered off"
	}
	return ""
}

// heldDevices names the devices attached to controller c.
func heldDevices(devices object.VirtualDeviceList, c types.BaseVirtualDevice) []string {
	key := c.GetVirtualDevice().Key
	var out []string
	for _, d := range devices {
		v := d.GetVirtualDevice()
		if v.ControllerKey != key || v.Key == key {
			continue
		}
		kind := devices.TypeName(d)
		switch d.(type) {
		case *types.VirtualDisk:
			kind = "a disk"
		case *types.VirtualCdrom:
			kind = "a CD-ROM"
		}
		if v.UnitNumber != nil {
			kind += fmt.Sprintf(" at unit %d", *v.UnitNumber)
		}
		out = append(out, kind)
	}
	return out
}

// scsiModel is the SCSI type the spec means: empty is the schema default ParaVirtual.
func scsiModel(t model.SCSIControllerType) model.SCSIControllerType {
	if t == "" {
		return model.SCSIControllerTypeParaVirtual
	}
	return t
}

// sharingModel is the sharing mode the spec means: empty is None.
func sharingModel(m model.ControllerSharingMode) model.ControllerSharingMode {
	if m == "" {
		return model.ControllerSharingModeNone
	}
	return m
}

// reshared is a copy of controller d with sharing mode m, for an edit.
func reshared(d types.BaseVirtualDevice, m model.ControllerSharingMode) types.BaseVirtualDevice {
	switch c := d.(type) {
	case *types.VirtualNVMEController:
		cp := *c
		cp.SharedBus = ""
		if m == model.ControllerSharingModePhysical {
			cp.SharedBus = string(types.VirtualNVMEControllerSharingPhysicalSharing)
		}
		return &cp
	case types.BaseVirtualSCSIController: // ParaVirtual, LsiLogic, LsiLogicSAS, BusLogic
		cp := reflect.New(reflect.TypeOf(d).Elem())
		cp.Elem().Set(reflect.ValueOf(d).Elem())
		copied := cp.Interface().(types.BaseVirtualSCSIController)
		copied.GetVirtualSCSIController().SharedBus = scsiSharing(m)
		return copied.(types.BaseVirtualDevice)
	}
	return d
}

// syncControllers applies the controller plan in one reconfigure and reads the VM again;
// problem says what is not as the spec asks (a refused change, or a failed reconfigure).
func (h *handler) syncControllers(ctx context.Context, vm *model.VirtualMachine, vcVM *object.VirtualMachine, mvm mo.VirtualMachine) (string, mo.VirtualMachine, error) {
	plan := planControllers(vm.Spec.Hardware, mvm.Config.Hardware.Device, model.Upgraded(vm, model.BuildVersion),
		mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOff)
	problem := strings.Join(plan.refused, "; ")
	if len(plan.changes) == 0 {
		return problem, mvm, nil
	}
	err := reconfigure(ctx, vcVM, plan.changes)
	switch {
	case vcenter.IsFault(err):
		return joinMessages(fmt.Sprintf("changing the controllers failed: %v", err), problem), mvm, nil
	case err != nil:
		return "", mvm, err
	}
	mvm, _, err = readVM(ctx, h.vc, vcVM.Reference().Value, "")
	return problem, mvm, err
}
