package storage

import (
	"testing"

	"github.com/vmop/vmop/pkg/model"
)

// The back-fill places unplaced CD-ROMs by D19 around the volumes' units, adds the SATA
// controller it needs, and changes nothing when it cannot place one (else every reconcile
// would write the VM again).
func TestBackfillCdroms(t *testing.T) {
	ide := []model.IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}}
	entries := func(n int) []model.VirtualMachineCdromSpec {
		var out []model.VirtualMachineCdromSpec
		for i := range n {
			out = append(out, model.VirtualMachineCdromSpec{Name: string(rune('a'+i)) + "x", Image: model.ImageRef{Name: string(rune('a' + i))}})
		}
		return out
	}
	spec := model.VirtualMachineSpec{Hardware: &model.VirtualMachineHardwareSpec{IDEControllers: ide, Cdrom: entries(5)}}
	hw := backfillCdroms(spec, nil, nil)
	if hw == nil || len(hw.SATAControllers) != 1 {
		t.Fatalf("hardware %+v, want a SATA controller added for the fifth CD-ROM", hw)
	}
	for i, c := range hw.Cdrom {
		if c.ControllerBusNumber == nil || c.UnitNumber == nil {
			t.Errorf("CD-ROM %d unplaced", i)
		}
	}
	if spec.Hardware.Cdrom[0].UnitNumber != nil || len(spec.Hardware.SATAControllers) != 0 {
		t.Errorf("the VM's own spec was changed")
	}
	if again := backfillCdroms(model.VirtualMachineSpec{Hardware: hw}, nil, nil); again != nil {
		t.Errorf("placed CD-ROMs back-filled again: %+v", again)
	}

	full := &model.VirtualMachineHardwareSpec{IDEControllers: ide, Cdrom: entries(1)}
	for bus := range int32(4) {
		full.SATAControllers = append(full.SATAControllers, model.SATAControllerSpec{BusNumber: bus})
	}
	var vols []model.VirtualMachineVolume
	for _, c := range []struct {
		typ   model.ControllerType
		buses int32
		units int32
	}{{model.ControllerTypeIDE, 2, 2}, {model.ControllerTypeSATA, 4, 30}} {
		for bus := range c.buses {
			for unit := range c.units {
				vols = append(vols, model.VirtualMachineVolume{ControllerType: c.typ, ControllerBusNumber: ptr(bus), UnitNumber: ptr(unit)})
			}
		}
	}
	if got := backfillCdroms(model.VirtualMachineSpec{Hardware: full}, nil, vols); got != nil {
		t.Errorf("no room, yet the hardware changed: %+v", got)
	}
}
