package model

// Device placement (api-rules D18, D19): the controller bus and unit of each volume and
// CD-ROM. The gateway places devices on updates of upgraded VMs; the VM service places
// them with the same algorithm at deploy time, so the entry points are exported and read
// nothing but the spec. Placement only fills what is empty and adds the controllers it
// needs; what it cannot place is left for validation (VOL-12, CD-6, CTL-*) to report.

// PlaceVolumes is D18: every volume gets a controller type, bus and unit. Volumes whose
// placement is complete claim their units first, then the others are placed in list order.
func PlaceVolumes(s *VirtualMachineSpec) {
	if len(s.Volumes) == 0 {
		return
	}
	p := newPlacer(s)
	if s.Hardware != nil {
		for _, c := range s.Hardware.Cdrom {
			if id, u, set := placement(c.ControllerType, c.ControllerBusNumber, c.UnitNumber); set && u >= 0 {
				p.used.take(id, u)
			}
		}
	}
	full := make([]bool, len(s.Volumes))
	for i, v := range s.Volumes {
		_, u, set := placement(v.ControllerType, v.ControllerBusNumber, v.UnitNumber)
		full[i] = set && u >= 0
	}
	for _, first := range []bool{true, false} {
		for i := range s.Volumes {
			if full[i] == first {
				p.placeVolume(&s.Volumes[i])
			}
		}
	}
}

// placeVolume puts one volume on the controller it names, or on the first controller of
// its type (SCSI when empty) with the sharing it needs and a free unit, or on a new one.
func (p *placer) placeVolume(v *VirtualMachineVolume) {
	t := v.ControllerType
	if t == "" {
		t = ControllerTypeSCSI
	}
	sharing := ControllerSharingModeNone
	if v.ApplicationType == VolumeApplicationTypeMicrosoftWSFC {
		sharing = ControllerSharingModePhysical
	}
	var id controllerID
	if v.ControllerBusNumber != nil {
		id = controllerID{t, *v.ControllerBusNumber}
		if !p.ensure(id, sharing) {
			return
		}
	} else {
		var ok bool
		if id, ok = p.firstWithRoom(t, sharing); !ok {
			if id, ok = p.lowestUnusedBus(t); !ok || !p.ensure(id, sharing) {
				return
			}
		}
	}
	if v.ControllerType == "" {
		v.ControllerType = t
	}
	p.assign(id, &v.ControllerBusNumber, &v.UnitNumber)
}

// PlaceCdroms is the placement part of D19: CD-ROMs with complete placement claim their
// units (creating a missing IDE or SATA controller); a CD-ROM naming type and bus gets the
// lowest free unit there; one naming nothing goes to the first IDE controller with room,
// else the first SATA controller with room, else a new SATA controller. Other partial
// placements are left alone. Volumes' units count as taken.
func PlaceCdroms(s *VirtualMachineSpec) {
	if s.Hardware == nil || len(s.Hardware.Cdrom) == 0 {
		return
	}
	p := newPlacer(s)
	for _, v := range s.Volumes {
		if id, u, set := placement(v.ControllerType, v.ControllerBusNumber, v.UnitNumber); set {
			p.used.take(id, u)
		}
	}
	cdroms := s.Hardware.Cdrom
	none := ControllerSharingModeNone
	for _, c := range cdroms {
		if id, u, set := placement(c.ControllerType, c.ControllerBusNumber, c.UnitNumber); set && u >= 0 && cdromControllerType(id.Type) {
			p.ensure(id, none)
			p.used.take(id, u)
		}
	}
	for i := range cdroms {
		c := &cdroms[i]
		switch {
		case c.ControllerType != "" && c.ControllerBusNumber != nil && c.UnitNumber == nil:
			id := controllerID{c.ControllerType, *c.ControllerBusNumber}
			if cdromControllerType(id.Type) && p.ensure(id, none) {
				p.assign(id, &c.ControllerBusNumber, &c.UnitNumber)
			}
		case c.ControllerType == "" && c.ControllerBusNumber == nil && c.UnitNumber == nil:
			if id, ok := p.cdromController(); ok {
				c.ControllerType = id.Type
				p.assign(id, &c.ControllerBusNumber, &c.UnitNumber)
			}
		}
	}
}

// cdromControllerType tells whether CD-ROMs may sit on controllers of type t.
func cdromControllerType(t ControllerType) bool {
	return t == ControllerTypeIDE || t == ControllerTypeSATA
}

// cdromController is where an unplaced CD-ROM goes: an IDE controller with room, else a
// SATA controller with room, else a new SATA controller.
func (p *placer) cdromController() (controllerID, bool) {
	for _, t := range []ControllerType{ControllerTypeIDE, ControllerTypeSATA} {
		if id, ok := p.firstWithRoom(t, ControllerSharingModeNone); ok {
			return id, true
		}
	}
	id, ok := p.lowestUnusedBus(ControllerTypeSATA)
	return id, ok && p.ensure(id, ControllerSharingModeNone)
}

// placer adds controllers to a spec and hands out units.
type placer struct {
	spec  *VirtualMachineSpec
	ctrls map[controllerID]controller
	used  slots
}

func newPlacer(s *VirtualMachineSpec) *placer {
	return &placer{spec: s, ctrls: controllers(s.Hardware), used: slots{}}
}

// ensure makes controller id exist, adding it to spec.hardware with the given sharing
// (SCSI ones as ParaVirtual) unless its bus is out of range or its type already has the
// most controllers a VM may have. It reports whether id exists afterwards.
func (p *placer) ensure(id controllerID, sharing ControllerSharingMode) bool {
	if _, ok := p.ctrls[id]; ok {
		return true
	}
	if !knownControllerType(id.Type) || !busInRange(id.Type, id.Bus) || p.count(id.Type) >= maxControllers(id.Type) {
		return false
	}
	if p.spec.Hardware == nil {
		p.spec.Hardware = &VirtualMachineHardwareSpec{}
	}
	hw := p.spec.Hardware
	switch id.Type {
	case ControllerTypeIDE:
		hw.IDEControllers = append(hw.IDEControllers, IDEControllerSpec{BusNumber: id.Bus})
	case ControllerTypeSATA:
		hw.SATAControllers = append(hw.SATAControllers, SATAControllerSpec{BusNumber: id.Bus})
	case ControllerTypeNVME:
		hw.NVMEControllers = append(hw.NVMEControllers, NVMEControllerSpec{BusNumber: id.Bus, SharingMode: sharing})
	case ControllerTypeSCSI:
		hw.SCSIControllers = append(hw.SCSIControllers, SCSIControllerSpec{
			BusNumber: id.Bus, SharingMode: sharing, Type: SCSIControllerTypeParaVirtual})
	}
	p.ctrls[id] = newController(id.Type, "", sharing)
	return true
}

// count is how many controllers of type t the spec has.
func (p *placer) count(t ControllerType) int32 {
	var n int32
	for id := range p.ctrls {
		if id.Type == t {
			n++
		}
	}
	return n
}

// firstWithRoom is the existing controller of type t with the lowest bus whose sharing
// is the one asked for and which has a free unit.
func (p *placer) firstWithRoom(t ControllerType, sharing ControllerSharingMode) (controllerID, bool) {
	for bus := int32(0); bus < maxControllers(t); bus++ {
		id := controllerID{t, bus}
		if c, ok := p.ctrls[id]; ok && c.sharing == sharing {
			if _, free := p.used.free(id, c); free {
				return id, true
			}
		}
	}
	return controllerID{}, false
}

// lowestUnusedBus is the lowest bus of type t that has no controller yet.
func (p *placer) lowestUnusedBus(t ControllerType) (controllerID, bool) {
	for bus := int32(0); bus < maxControllers(t); bus++ {
		if _, ok := p.ctrls[controllerID{t, bus}]; !ok {
			return controllerID{t, bus}, true
		}
	}
	return controllerID{}, false
}

// assign writes the bus of controller id into an empty bus field, and claims the unit the
// device names or else the lowest free one (left empty when the controller is full).
func (p *placer) assign(id controllerID, bus, unit **int32) {
	if *bus == nil {
		b := id.Bus
		*bus = &b
	}
	if *unit != nil {
		p.used.take(id, **unit)
		return
	}
	if u, ok := p.used.free(id, p.ctrls[id]); ok {
		*unit = &u
		p.used.take(id, u)
	}
}
