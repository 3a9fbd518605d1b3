package model

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVirtualMachineDisplayStatus(t *testing.T) {
	asked := time.Date(2025, 3, 1, 10, 0, 0, 500_000_000, time.UTC) // nextRestartTime, with nanoseconds
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason}
	}
	type vmState struct {
		deleting          bool
		desired, observed PowerState
		nextRestart       string
		lastRestart       *time.Time
		conditions        []metav1.Condition
	}
	at := func(t time.Time) *time.Time { return &t }
	tests := []struct {
		name string
		vm   vmState
		want DisplayStatus
	}{
		{"new, nothing observed", vmState{desired: PowerStateOn}, DisplayCreating},
		{"placement waiting for the image", vmState{desired: PowerStateOn,
			conditions: []metav1.Condition{cond(ConditionImageReady, metav1.ConditionFalse, ReasonNotReady)}}, DisplayCreating},
		{"placement creating", vmState{desired: PowerStateOn,
			conditions: []metav1.Condition{cond(ConditionCreated, metav1.ConditionFalse, ReasonCreating)}}, DisplayCreating},
		{"class not found", vmState{desired: PowerStateOn,
			conditions: []metav1.Condition{cond(ConditionClassReady, metav1.ConditionFalse, ReasonNotFound)}}, DisplayFailed},
		{"create failed", vmState{desired: PowerStateOn,
			conditions: []metav1.Condition{cond(ConditionCreated, metav1.ConditionFalse, ReasonError)}}, DisplayFailed},
		{"created off, desired on", vmState{desired: PowerStateOn, observed: PowerStateOff}, DisplayStarting},
		{"resuming", vmState{desired: PowerStateOn, observed: PowerStateSuspended}, DisplayStarting},
		{"running", vmState{desired: PowerStateOn, observed: PowerStateOn}, DisplayRunning},
		{"power-on checks", vmState{desired: PowerStateOn, observed: PowerStateOff,
			conditions: []metav1.Condition{cond(ConditionPowerStateSynced, metav1.ConditionFalse, ReasonPowerOnBlocked)}}, DisplayBlocked},
		{"power-on not synced for another reason", vmState{desired: PowerStateOn, observed: PowerStateOff,
			conditions: []metav1.Condition{cond(ConditionPowerStateSynced, metav1.ConditionFalse, ReasonNotSynced)}}, DisplayStarting},
		{"stopping", vmState{desired: PowerStateOff, observed: PowerStateOn}, DisplayStopping},
		{"stopping a suspended VM", vmState{desired: PowerStateOff, observed: PowerStateSuspended}, DisplayStopping},
		{"stopped", vmState{desired: PowerStateOff, observed: PowerStateOff}, DisplayStopped},
		{"suspending", vmState{desired: PowerStateSuspended, observed: PowerStateOn}, DisplayStopping},
		{"suspended", vmState{desired: PowerStateSuspended, observed: PowerStateSuspended}, DisplaySuspended},
		{"restart asked, never restarted", vmState{desired: PowerStateOn, observed: PowerStateOn,
			nextRestart: asked.Format(time.RFC3339Nano)}, DisplayRestarting},
		{"restart asked after the last one", vmState{desired: PowerStateOn, observed: PowerStateOn,
			nextRestart: asked.Format(time.RFC3339Nano), lastRestart: at(asked.Add(-time.Hour))}, DisplayRestarting},
		{"restarted, reported in whole seconds", vmState{desired: PowerStateOn, observed: PowerStateOn,
			nextRestart: asked.Format(time.RFC3339Nano), lastRestart: at(asked.Truncate(time.Second))}, DisplayRunning},
		{"restarted later", vmState{desired: PowerStateOn, observed: PowerStateOn,
			nextRestart: asked.Format(time.RFC3339Nano), lastRestart: at(asked.Add(time.Minute))}, DisplayRunning},
		{"restart asked of a VM that is off", vmState{desired: PowerStateOn, observed: PowerStateOff,
			nextRestart: asked.Format(time.RFC3339Nano)}, DisplayStarting},
		{"deleting", vmState{deleting: true, desired: PowerStateOn, observed: PowerStateOn}, DisplayDeleting},
		{"deleting, checks cleared", vmState{deleting: true, desired: PowerStateOn, observed: PowerStateOn,
			conditions: []metav1.Condition{cond(ConditionDeleteChecksCleared, metav1.ConditionTrue, ReasonTrue)}}, DisplayDeleting},
		{"deletion held by delete checks", vmState{deleting: true, desired: PowerStateOn, observed: PowerStateOn,
			conditions: []metav1.Condition{cond(ConditionDeleteChecksCleared, metav1.ConditionFalse, ReasonDeleteChecksPending)}}, DisplayBlocked},
		{"deleting before creation", vmState{deleting: true, desired: PowerStateOn}, DisplayDeleting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := &VirtualMachine{}
			if tt.vm.deleting {
				vm.DeletionTimestamp = &metav1.Time{Time: asked}
			}
			vm.Spec.PowerState, vm.Status.PowerState = tt.vm.desired, tt.vm.observed
			vm.Spec.NextRestartTime, vm.Status.Conditions = tt.vm.nextRestart, tt.vm.conditions
			if tt.vm.lastRestart != nil {
				vm.Status.LastRestartTime = &metav1.Time{Time: *tt.vm.lastRestart}
			}
			if got := VirtualMachineDisplayStatus(vm); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// The Status column reads the stored JSON, where lastRestartTime has whole seconds.
func TestVirtualMachineStatusCell(t *testing.T) {
	stored := `{"metadata":{"name":"vm"},"spec":{"powerState":"PoweredOn","nextRestartTime":"2025-03-01T10:00:00.5Z"},
		"status":{"powerState":"PoweredOn","lastRestartTime":"2025-03-01T10:00:00Z"}}`
	if got := virtualMachineStatusCell([]byte(stored)); got != "Running" {
		t.Errorf("cell = %v, want Running", got)
	}
	if got := virtualMachineStatusCell([]byte(`[]`)); got != nil {
		t.Errorf("cell of a non-object = %v, want nil", got)
	}
}
