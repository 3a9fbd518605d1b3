package model

// The storage-controller model shared by device placement (D18, D19) and the controller
// and volume rules (CTL, VOL): how many controllers of a type a VM may have, how many
// units each offers, and which units are taken (api-rules §2).

// controllerID names one storage controller of a VM.
type controllerID struct {
	Type ControllerType
	Bus  int32
}

// scsiReservedUnit is the unit of every SCSI controller that is the controller itself.
const scsiReservedUnit = 7

// knownControllerType tells whether t is one of the four storage controller types.
func knownControllerType(t ControllerType) bool {
	switch t {
	case ControllerTypeIDE, ControllerTypeSATA, ControllerTypeNVME, ControllerTypeSCSI:
		return true
	}
	return false
}

// maxControllers is how many controllers of a type a VM may have: buses 0..n-1.
func maxControllers(t ControllerType) int32 {
	if t == ControllerTypeIDE {
		return 2
	}
	return 4
}

// busInRange tells whether bus is a valid bus number for controllers of type t.
func busInRange(t ControllerType, bus int32) bool {
	return bus >= 0 && bus < maxControllers(t)
}

// controllerUnits is how many unit numbers (0..n-1) a controller offers.
func controllerUnits(t ControllerType, scsi SCSIControllerType) int32 {
	switch t {
	case ControllerTypeIDE:
		return 2
	case ControllerTypeSATA:
		return 30
	case ControllerTypeNVME:
		return 64
	case ControllerTypeSCSI:
		if scsi == "" || scsi == SCSIControllerTypeParaVirtual {
			return 65
		}
		return 16
	}
	return 0
}

// controller is what placement and validation know of one controller in spec.hardware.
type controller struct {
	typ     ControllerType
	units   int32
	sharing ControllerSharingMode // None for IDE and SATA, which cannot share
	scsi    SCSIControllerType    // SCSI adapter model, "" for other types
}

// newController describes a controller of type t; scsi and sharing may be "" (defaults).
func newController(t ControllerType, scsi SCSIControllerType, sharing ControllerSharingMode) controller {
	c := controller{typ: t, sharing: ControllerSharingModeNone}
	switch t {
	case ControllerTypeSCSI:
		if scsi == "" {
			scsi = SCSIControllerTypeParaVirtual
		}
		c.scsi, c.sharing = scsi, controllerSharing(sharing)
	case ControllerTypeNVME:
		c.sharing = controllerSharing(sharing)
	}
	c.units = controllerUnits(t, c.scsi)
	return c
}

// reserved tells whether unit u is taken by the controller itself.
func (c controller) reserved(u int32) bool {
	return c.typ == ControllerTypeSCSI && u == scsiReservedUnit
}

// maxDevices is how many devices the controller can carry.
func (c controller) maxDevices() int {
	if c.typ == ControllerTypeSCSI && c.units > scsiReservedUnit {
		return int(c.units) - 1
	}
	return int(c.units)
}

// controllerSharing is a sharing mode with the schema default applied.
func controllerSharing(m ControllerSharingMode) ControllerSharingMode {
	if m == "" {
		return ControllerSharingModeNone
	}
	return m
}

// controllers indexes the controllers of a hardware spec by type and bus.
func controllers(hw *VirtualMachineHardwareSpec) map[controllerID]controller {
	out := map[controllerID]controller{}
	if hw == nil {
		return out
	}
	for _, c := range hw.IDEControllers {
		out[controllerID{ControllerTypeIDE, c.BusNumber}] = newController(ControllerTypeIDE, "", "")
	}
	for _, c := range hw.SATAControllers {
		out[controllerID{ControllerTypeSATA, c.BusNumber}] = newController(ControllerTypeSATA, "", "")
	}
	for _, c := range hw.NVMEControllers {
		out[controllerID{ControllerTypeNVME, c.BusNumber}] = newController(ControllerTypeNVME, "", c.SharingMode)
	}
	for _, c := range hw.SCSIControllers {
		out[controllerID{ControllerTypeSCSI, c.BusNumber}] = newController(ControllerTypeSCSI, c.Type, c.SharingMode)
	}
	return out
}

// slots records which units of which controllers are taken.
type slots map[controllerID]map[int32]bool

func (s slots) take(id controllerID, u int32) {
	if s[id] == nil {
		s[id] = map[int32]bool{}
	}
	s[id][u] = true
}

func (s slots) taken(id controllerID, u int32) bool { return s[id][u] }

func (s slots) count(id controllerID) int { return len(s[id]) }

// free is the lowest unit of controller c that is neither taken nor reserved.
func (s slots) free(id controllerID, c controller) (int32, bool) {
	for u := int32(0); u < c.units; u++ {
		if !c.reserved(u) && !s.taken(id, u) {
			return u, true
		}
	}
	return 0, false
}

// placement reads a device's controller type, bus and unit; set is true when all three
// are given (whatever their values).
func placement(t ControllerType, bus, unit *int32) (id controllerID, u int32, set bool) {
	if t == "" || bus == nil || unit == nil {
		return controllerID{}, 0, false
	}
	return controllerID{t, *bus}, *unit, true
}
