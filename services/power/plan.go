package power

import (
	"context"

	"github.com/vmware/govmomi/object"

	"github.com/vmop/vmop/pkg/model"
)

// opKind is what a power operation does to the VM.
type opKind string

const (
	opPowerOn  opKind = "power on"
	opPowerOff opKind = "power off"
	opSuspend  opKind = "suspend"
)

// operation is one power operation: what and how. Everything is Hard for now; Soft and
// TrySoft (guest shutdown and standby, with the hard fallback) come with the modes.
type operation struct {
	kind opKind
	mode model.PowerOpMode
}

// start issues the operation's vCenter task.
func (op operation) start(ctx context.Context, vm *object.VirtualMachine) (*object.Task, error) {
	switch op.kind {
	case opPowerOn:
		return vm.PowerOn(ctx)
	case opPowerOff:
		return vm.PowerOff(ctx)
	default:
		return vm.Suspend(ctx)
	}
}

// plan returns the operation that takes the VM from observed to desired, or, when there
// is none to run now, why not ("" when nothing needs doing or the gate explains it).
func plan(desired, observed model.PowerState, g gate) (*operation, string) {
	if observed == desired {
		return nil, ""
	}
	switch desired {
	case model.PowerStateOn:
		if !g.open() {
			return nil, ""
		}
		return &operation{kind: opPowerOn, mode: model.PowerOpModeHard}, ""
	case model.PowerStateOff:
		// From Suspended only a hard power-off works: a suspended guest cannot answer.
		return &operation{kind: opPowerOff, mode: model.PowerOpModeHard}, ""
	case model.PowerStateSuspended:
		if observed != model.PowerStateOn {
			return nil, "only a powered-on VM can be suspended"
		}
		return &operation{kind: opSuspend, mode: model.PowerOpModeHard}, ""
	}
	return nil, "unknown desired power state"
}
