package storage

import (
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// Volume placement at attach time (api-rules D18, the seed's Volume Placement): the
// requested controller and unit, or the first controller of the type whose sharing the
// volume needs with a free unit, or a new controller at the lowest unused bus.

// slotController is one storage controller of the VM, existing or added by this reconcile.
type slotController struct {
	key     int32
	typ     model.ControllerType
	bus     int32
	sharing model.ControllerSharingMode
	units   int32 // unit numbers 0..units-1
}

// slots knows the VM's controllers and which of their units are taken, including by the
// disks this reconcile adds.
type slots struct {
	ctrls  []slotController
	taken  map[int32]map[int32]bool // controller key → unit → taken
	adds   []types.BaseVirtualDeviceConfigSpec
	newKey int32 // the next temporary (negative) device key
}

func newSlots(devices object.VirtualDeviceList) *slots {
	s := &slots{taken: map[int32]map[int32]bool{}, newKey: -1000}
	for _, d := range devices {
		typ, bus, ok := controllerID(d)
		if !ok {
			continue
		}
		s.ctrls = append(s.ctrls, slotController{key: d.GetVirtualDevice().Key, typ: typ, bus: bus, sharing: sharingOf(d), units: unitsOf(d)})
	}
	for _, d := range devices {
		v := d.GetVirtualDevice()
		if v.UnitNumber != nil && v.ControllerKey != 0 {
			s.take(v.ControllerKey, *v.UnitNumber)
		}
	}
	return s
}

func (s *slots) take(key, unit int32) {
	if s.taken[key] == nil {
		s.taken[key] = map[int32]bool{}
	}
	s.taken[key][unit] = true
}

// free is the lowest free unit of c; false when it is full.
func (s *slots) free(c slotController) (int32, bool) {
	for u := int32(0); u < c.units; u++ {
		if !s.taken[c.key][u] && !(c.typ == model.ControllerTypeSCSI && u == scsiControllerUnit) {
			return u, true
		}
	}
	return 0, false
}

// place chooses the controller and unit of a volume to attach and marks the unit taken;
// a new controller it needs joins s.adds. The error says why the volume cannot be placed.
func (s *slots) place(v model.VirtualMachineVolume) (ctrlKey, unit int32, err error) {
	typ := v.ControllerType
	if typ == "" {
		typ = model.ControllerTypeSCSI
	}
	sharing := model.ControllerSharingModeNone
	if v.ApplicationType == model.VolumeApplicationTypeMicrosoftWSFC {
		sharing = model.ControllerSharingModePhysical
	}
	var c slotController
	var found bool
	if v.ControllerBusNumber != nil {
		c, found = s.find(typ, *v.ControllerBusNumber)
		if !found {
			if c, err = s.add(typ, *v.ControllerBusNumber, sharing); err != nil {
				return 0, 0, err
			}
		}
	} else {
		for _, cand := range s.ctrls {
			if _, ok := s.free(cand); ok && cand.typ == typ && cand.sharing == sharing && (!found || cand.bus < c.bus) {
				c, found = cand, true
			}
		}
		if !found {
			if c, err = s.addAtFreeBus(typ, sharing); err != nil {
				return 0, 0, err
			}
		}
	}
	if v.UnitNumber != nil {
		u := *v.UnitNumber
		switch {
		case u < 0 || u >= c.units:
			return 0, 0, fmt.Errorf("unit %d is outside %s %d's units 0-%d", u, c.typ, c.bus, c.units-1)
		case c.typ == model.ControllerTypeSCSI && u == scsiControllerUnit:
			return 0, 0, fmt.Errorf("unit %d of %s %d is the controller itself", u, c.typ, c.bus)
		case s.taken[c.key][u]:
			return 0, 0, fmt.Errorf("unit %d of %s %d is already taken", u, c.typ, c.bus)
		}
		s.take(c.key, u)
		return c.key, u, nil
	}
	u, ok := s.free(c)
	if !ok {
		return 0, 0, fmt.Errorf("%s %d has no free unit", c.typ, c.bus)
	}
	s.take(c.key, u)
	return c.key, u, nil
}

func (s *slots) find(typ model.ControllerType, bus int32) (slotController, bool) {
	for _, c := range s.ctrls {
		if c.typ == typ && c.bus == bus {
			return c, true
		}
	}
	return slotController{}, false
}

// addAtFreeBus adds a controller of the type at the lowest bus it does not have.
func (s *slots) addAtFreeBus(typ model.ControllerType, sharing model.ControllerSharingMode) (slotController, error) {
	for bus := int32(0); bus < maxBuses(typ); bus++ {
		if _, ok := s.find(typ, bus); !ok {
			return s.add(typ, bus, sharing)
		}
	}
	return slotController{}, fmt.Errorf("no %s controller with sharing %s has a free unit, and the VM has the most %s controllers it may", typ, sharing, typ)
}

// add adds a controller (ParaVirtual for SCSI) to the reconfigure.
func (s *slots) add(typ model.ControllerType, bus int32, sharing model.ControllerSharingMode) (slotController, error) {
	if bus < 0 || bus >= maxBuses(typ) {
		return slotController{}, fmt.Errorf("%s bus %d does not exist (buses 0-%d)", typ, bus, maxBuses(typ)-1)
	}
	w := wantController{typ: typ, bus: bus, sharing: sharing}
	d, ok := w.device(s.newKey)
	if !ok {
		return slotController{}, fmt.Errorf("%s controller %d cannot be added", typ, bus)
	}
	s.newKey--
	s.adds = append(s.adds, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: d})
	c := slotController{key: d.GetVirtualDevice().Key, typ: typ, bus: bus, sharing: sharingOf(d), units: unitsOf(d)}
	s.ctrls = append(s.ctrls, c)
	return c, nil
}

// scsiControllerUnit is the unit of every SCSI bus that is the controller itself.
const scsiControllerUnit = 7

func maxBuses(typ model.ControllerType) int32 {
	if typ == model.ControllerTypeIDE {
		return 2
	}
	return 4
}

// unitsOf is how many units a controller offers (api-rules §2).
func unitsOf(d types.BaseVirtualDevice) int32 {
	switch d.(type) {
	case *types.VirtualIDEController:
		return 2
	case *types.VirtualAHCIController, *types.VirtualSATAController:
		return 30
	case *types.VirtualNVMEController:
		return 64
	case *types.ParaVirtualSCSIController:
		return 65
	}
	return 16 // the other SCSI models
}

// sharingOf is a controller's bus sharing as the API names it.
func sharingOf(d types.BaseVirtualDevice) model.ControllerSharingMode {
	var shared string
	switch c := d.(type) {
	case types.BaseVirtualSCSIController:
		shared = string(c.GetVirtualSCSIController().SharedBus)
	case *types.VirtualNVMEController:
		shared = c.SharedBus
	}
	switch shared {
	case string(types.VirtualSCSISharingPhysicalSharing):
		return model.ControllerSharingModePhysical
	case string(types.VirtualSCSISharingVirtualSharing):
		return model.ControllerSharingModeVirtual
	}
	return model.ControllerSharingModeNone
}
