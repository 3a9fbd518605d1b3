package storage

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// CD-ROMs (spec.hardware.cdrom, api-rules §7.8). Each entry is a CD-ROM at the slot its
// placement names (D19, or the schema upgrade's back-fill), backed by its image's ISO
// file, connected and guest-controlled as asked; a CD-ROM at a slot no entry names is
// removed. What is applied is read back from vCenter (the device at the slot and its
// backing), so a crash or a redelivery repeats no change.

// wantCdrom is an entry of spec.hardware.cdrom resolved to its slot and ISO file.
type wantCdrom struct {
	spec      model.VirtualMachineCdromSpec
	slot      slot
	file      string
	connected bool
	guest     bool
}

// slot is a device's place: its controller's type and bus, and its unit.
type slot struct {
	typ  model.ControllerType
	bus  int32
	unit int32
}

func (s slot) String() string { return fmt.Sprintf("%s %d:%d", s.typ, s.bus, s.unit) }

// syncCdroms brings the VM's CD-ROMs in line with spec.hardware.cdrom in one reconfigure
// and sets VirtualMachineHardwareCDROMVerified. Nothing is changed while an entry cannot
// be resolved (its image is missing or no ISO, its placement incomplete), so a bad entry
// never leaves the VM half changed. It returns the VM as read after a change, and what
// keeps the CD-ROMs from being as the spec says.
func (h *handler) syncCdroms(ctx context.Context, vm *model.VirtualMachine, vcVM *object.VirtualMachine, mvm mo.VirtualMachine, conds *reconcile.ConditionSet) (mo.VirtualMachine, string, error) {
	var entries []model.VirtualMachineCdromSpec
	if vm.Spec.Hardware != nil {
		entries = vm.Spec.Hardware.Cdrom
	}
	want, problems, err := h.wantCdroms(ctx, vm.Namespace, entries)
	if err != nil {
		return mvm, "", err
	}
	var changes []types.BaseVirtualDeviceConfigSpec
	if len(problems) == 0 {
		changes, problems = cdromChanges(mvm, want)
	}
	if len(problems) == 0 && len(changes) > 0 {
		refused := reconfigure(ctx, vcVM, changes)
		if refused != nil && !vcenter.IsFault(refused) {
			return mvm, "", refused
		}
		fresh, _, err := readVM(ctx, h.vc, vcVM.Reference().Value, "")
		if err != nil {
			return mvm, "", err
		}
		mvm = fresh
		// vCenter refused the change: what the VM has now decides. The same CD-ROMs may
		// have landed since the read (a reconcile of a replica that was stopping), which
		// is no mismatch; a change still wanted is.
		if refused != nil {
			if again, still := cdromChanges(mvm, want); len(again) > 0 || len(still) > 0 {
				problems = append(problems, fmt.Sprintf("changing the CD-ROMs failed: %v", refused))
			}
		}
	}
	if len(problems) > 0 {
		problem := joinMessages(problems...)
		conds.Set(model.ConditionHardwareCDROMVerified, metav1.ConditionFalse, model.ReasonHardwareCDROMMismatch, problem)
		return mvm, problem, nil
	}
	conds.Set(model.ConditionHardwareCDROMVerified, metav1.ConditionTrue, "", "")
	return mvm, "", nil
}

// wantCdroms resolves each entry; problems say which cannot be (yet).
func (h *handler) wantCdroms(ctx context.Context, namespace string, entries []model.VirtualMachineCdromSpec) ([]wantCdrom, []string, error) {
	var want []wantCdrom
	var problems []string
	for _, e := range entries {
		if e.ControllerType == "" || e.ControllerBusNumber == nil || e.UnitNumber == nil {
			problems = append(problems, fmt.Sprintf("CD-ROM %s waits for its controller and unit", e.Name))
			continue
		}
		img, err := h.isos.find(ctx, namespace, e.Image)
		if err != nil {
			return nil, nil, err
		}
		if img.problem != "" {
			problems = append(problems, fmt.Sprintf("CD-ROM %s: %s", e.Name, img.problem))
			continue
		}
		want = append(want, wantCdrom{
			spec: e, slot: slot{e.ControllerType, *e.ControllerBusNumber, *e.UnitNumber}, file: img.file,
			connected: e.Connected == nil || *e.Connected, guest: e.AllowGuestControl == nil || *e.AllowGuestControl,
		})
	}
	return want, problems, nil
}

// cdromChanges are the device changes from the CD-ROMs of the VM as read to want: an
// edit where the slot's CD-ROM differs in file or state, an add where the slot has none,
// a remove for every CD-ROM at a slot no entry names. A powered-off VM's CD-ROMs are never
// connected (vCenter connects them at power-on as they start connected), so only
// startConnected counts there.
func cdromChanges(mvm mo.VirtualMachine, want []wantCdrom) ([]types.BaseVirtualDeviceConfigSpec, []string) {
	devices := object.VirtualDeviceList(mvm.Config.Hardware.Device)
	on := mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
	have := map[slot]*types.VirtualCdrom{}
	for _, d := range devices.SelectByType((*types.VirtualCdrom)(nil)) {
		if s, ok := deviceSlot(devices, d); ok {
			have[s] = d.(*types.VirtualCdrom)
		}
	}
	var changes []types.BaseVirtualDeviceConfigSpec
	var problems []string
	named := map[slot]bool{}
	for _, w := range want {
		named[w.slot] = true
		cur := have[w.slot]
		if cur != nil {
			if !cdromMatches(cur, w, on) {
				changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: w.device(cur.Key, cur.ControllerKey)})
			}
			continue
		}
		ctrl := controllerAt(devices, w.slot.typ, w.slot.bus)
		if ctrl == nil {
			problems = append(problems, fmt.Sprintf("CD-ROM %s: the VM has no %s controller %d", w.spec.Name, w.slot.typ, w.slot.bus))
			continue
		}
		if occupied(devices, ctrl.GetVirtualDevice().Key, w.slot.unit) {
			problems = append(problems, fmt.Sprintf("CD-ROM %s: unit %s is taken by another device", w.spec.Name, w.slot))
			continue
		}
		changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: w.device(int32(-100-len(changes)), ctrl.GetVirtualDevice().Key)})
	}
	for _, d := range devices.SelectByType((*types.VirtualCdrom)(nil)) { // in device order
		if s, ok := deviceSlot(devices, d); ok && !named[s] {
			changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: d})
		}
	}
	return changes, problems
}

// cdromMatches says whether the CD-ROM is what w asks for.
func cdromMatches(d *types.VirtualCdrom, w wantCdrom, on bool) bool {
	b, ok := d.Backing.(*types.VirtualCdromIsoBackingInfo)
	c := d.Connectable
	if !ok || b.FileName != w.file || c == nil {
		return false
	}
	return c.StartConnected == w.connected && c.AllowGuestControl == w.guest && (!on || c.Connected == w.connected)
}

// device is the CD-ROM w asks for, with the given key on the controller.
func (w wantCdrom) device(key, ctrlKey int32) *types.VirtualCdrom {
	unit := w.slot.unit
	return &types.VirtualCdrom{VirtualDevice: types.VirtualDevice{
		Key: key, ControllerKey: ctrlKey, UnitNumber: &unit,
		Backing:     &types.VirtualCdromIsoBackingInfo{VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: w.file}},
		Connectable: &types.VirtualDeviceConnectInfo{StartConnected: w.connected, Connected: w.connected, AllowGuestControl: w.guest},
	}}
}

// deviceSlot is where a device sits: its controller's type and bus, and its unit.
func deviceSlot(devices object.VirtualDeviceList, d types.BaseVirtualDevice) (slot, bool) {
	v := d.GetVirtualDevice()
	if v.UnitNumber == nil {
		return slot{}, false
	}
	typ, bus, ok := controllerID(devices.FindByKey(v.ControllerKey))
	return slot{typ, bus, *v.UnitNumber}, ok
}

// controllerAt is the VM's controller of the type and bus, nil when it has none.
func controllerAt(devices object.VirtualDeviceList, typ model.ControllerType, bus int32) types.BaseVirtualDevice {
	for _, d := range devices {
		if t, b, ok := controllerID(d); ok && t == typ && b == bus {
			return d
		}
	}
	return nil
}

// occupied says whether a device sits at the unit of the controller.
func occupied(devices object.VirtualDeviceList, ctrlKey, unit int32) bool {
	for _, d := range devices {
		v := d.GetVirtualDevice()
		if v.ControllerKey == ctrlKey && v.UnitNumber != nil && *v.UnitNumber == unit {
			return true
		}
	}
	return false
}
