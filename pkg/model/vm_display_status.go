package model

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DisplayStatus is a VirtualMachine's state in one word for people (the "Status" printer
// column, a web console), as KubeVirt's printableStatus. It is derived from spec and
// status on every read, never stored, so it cannot go stale.
type DisplayStatus string

// The display statuses, from birth to deletion.
const (
	DisplayCreating   DisplayStatus = "Creating"   // not in vCenter yet
	DisplayStarting   DisplayStatus = "Starting"   // desired PoweredOn, not on yet
	DisplayRunning    DisplayStatus = "Running"    // desired and observed PoweredOn
	DisplayStopping   DisplayStatus = "Stopping"   // desired off or suspended, still on its way
	DisplayStopped    DisplayStatus = "Stopped"    // desired and observed PoweredOff
	DisplaySuspended  DisplayStatus = "Suspended"  // desired and observed Suspended
	DisplayRestarting DisplayStatus = "Restarting" // a restart asked through nextRestartTime has not happened yet
	DisplayBlocked    DisplayStatus = "Blocked"    // power-on or delete checks hold the VM
	DisplayDeleting   DisplayStatus = "Deleting"   // deletion requested
	DisplayFailed     DisplayStatus = "Failed"     // the VM cannot be created until someone acts
)

// ReasonPowerOnBlocked is the power service's reason of VirtualMachinePowerStateSynced
// False while poweron.check annotations hold a VM off.
const ReasonPowerOnBlocked = "PowerOnBlocked"

// waitingReasons are the False reasons of creation prerequisites that say "not yet"
// rather than "wrong": a VM with only these is still Creating.
var waitingReasons = map[string]bool{"": true, ReasonFalse: true, ReasonNotReady: true, ReasonCreating: true, ReasonPending: true}

// creationConditions are the conditions placement sets before and while creating the VM;
// one False for a reason other than waiting means the VM will not appear by itself.
var creationConditions = []string{ConditionClassReady, ConditionImageReady, ConditionResourcePolicyReady,
	ConditionPlacementReady, ConditionCreated}

// VirtualMachineDisplayStatus derives vm's display status. Deletion comes first (Blocked
// while delete checks hold it), then creation (observed power unknown), then power-on
// checks, then desired against observed power and a pending restart.
func VirtualMachineDisplayStatus(vm *VirtualMachine) DisplayStatus {
	conds := vm.Status.Conditions
	if vm.DeletionTimestamp != nil {
		if c := findCondition(conds, ConditionDeleteChecksCleared); c != nil && c.Status == metav1.ConditionFalse {
			return DisplayBlocked
		}
		return DisplayDeleting
	}
	desired, observed := vm.Spec.PowerState, vm.Status.PowerState
	if observed == "" {
		for _, typ := range creationConditions {
			if c := findCondition(conds, typ); c != nil && c.Status == metav1.ConditionFalse && !waitingReasons[c.Reason] {
				return DisplayFailed
			}
		}
		return DisplayCreating
	}
	if c := findCondition(conds, ConditionPowerStateSynced); desired == PowerStateOn && observed != PowerStateOn &&
		c != nil && c.Status == metav1.ConditionFalse && c.Reason == ReasonPowerOnBlocked {
		return DisplayBlocked
	}
	switch {
	case desired == PowerStateOn && observed == PowerStateOn && restartPending(vm):
		return DisplayRestarting
	case desired == PowerStateOn && observed == PowerStateOn:
		return DisplayRunning
	case desired == PowerStateOn:
		return DisplayStarting
	case observed == PowerStateOn:
		return DisplayStopping // on its way to PoweredOff or Suspended
	case observed == PowerStateSuspended && desired == PowerStateSuspended:
		return DisplaySuspended
	case observed == PowerStateSuspended:
		return DisplayStopping
	}
	return DisplayStopped
}

// restartPending: spec.nextRestartTime asks for a restart later than the last one
// reported. status.lastRestartTime is serialised to whole seconds, so the asked time is
// compared at that precision too.
func restartPending(vm *VirtualMachine) bool {
	if vm.Spec.NextRestartTime == "" {
		return false
	}
	next, err := time.Parse(time.RFC3339Nano, vm.Spec.NextRestartTime)
	if err != nil {
		return false
	}
	last := vm.Status.LastRestartTime
	return last == nil || last.Time.Before(next.Truncate(time.Second))
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// virtualMachineStatusCell is the Status printer column: the display status of a stored
// VirtualMachine; nothing for a body that is not one.
func virtualMachineStatusCell(obj []byte) any {
	var vm VirtualMachine
	if err := json.Unmarshal(obj, &vm); err != nil {
		return nil
	}
	return string(VirtualMachineDisplayStatus(&vm))
}
