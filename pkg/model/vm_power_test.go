package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachinePowerRules(t *testing.T) {
	desired := func(s PowerState) func(*VirtualMachine) { return func(vm *VirtualMachine) { vm.Spec.PowerState = s } }
	observed := func(s PowerState) func(*VMEnv) { return func(env *VMEnv) { env.ObservedPower = s } }
	const power, guestID = "spec.powerState", "spec.guestID"
	runVMCases(t, []vmCase{
		{name: "PWR-1 new VM PoweredOff", change: desired(PowerStateOff), code: 200},
		{name: "PWR-1 new VM Suspended", change: desired(PowerStateSuspended), code: 422, path: power, typ: field.ErrorTypeInvalid},

		{name: "PWR-2 desired state kept", update: true, code: 200},
		{name: "PWR-2 desired state emptied", update: true, change: desired(""), code: 422, path: power, typ: field.ErrorTypeInvalid},

		{name: "PWR-3 PoweredOff to PoweredOn", update: true, stored: desired(PowerStateOff), change: desired(PowerStateOn), code: 200},
		{name: "PWR-3 PoweredOn to Suspended", update: true, change: desired(PowerStateSuspended), env: observed(PowerStateOn), code: 200},
		{name: "PWR-3 Suspended to PoweredOff", update: true, later: desired(PowerStateSuspended), change: desired(PowerStateOff), code: 200},
		{name: "PWR-3 PoweredOff to Suspended", update: true, stored: desired(PowerStateOff), change: desired(PowerStateSuspended),
			code: 422, path: power, typ: field.ErrorTypeInvalid},

		{name: "PWR-8 guestID changed while desired PoweredOff", update: true, stored: desired(PowerStateOff),
			change: func(vm *VirtualMachine) { vm.Spec.GuestID = "ubuntu64Guest" }, code: 200},
		{name: "PWR-8 guestID changed while a power-on check holds the VM", update: true,
			stored: func(vm *VirtualMachine) { setAnnotation(vm, PowerOnCheckPrefix+"backup", "restoring") },
			change: func(vm *VirtualMachine) { vm.Spec.GuestID = "ubuntu64Guest" }, code: 200},
		{name: "PWR-8 guestID changed under G", update: true,
			change: func(vm *VirtualMachine) { vm.Spec.GuestID = "ubuntu64Guest" }, code: 422, path: guestID, typ: field.ErrorTypeForbidden},

		{name: "PWR-11 suspend a VM observed PoweredOn", update: true, change: desired(PowerStateSuspended), env: observed(PowerStateOn), code: 200},
		{name: "PWR-11 suspend a VM observed PoweredOff", update: true, change: desired(PowerStateSuspended), env: observed(PowerStateOff),
			code: 422, path: power, typ: field.ErrorTypeInvalid},

		{name: "PWR-12 power off a suspended VM with TrySoft", update: true, later: desired(PowerStateSuspended),
			change: desired(PowerStateOff), env: observed(PowerStateSuspended), code: 200},
		{name: "PWR-12 power off a suspended VM with Hard", update: true, later: desired(PowerStateSuspended),
			change: func(vm *VirtualMachine) { vm.Spec.PowerState, vm.Spec.PowerOffMode = PowerStateOff, PowerOpModeHard },
			env:    observed(PowerStateSuspended), code: 200},
		{name: "PWR-12 power off a suspended VM with Soft", update: true, later: desired(PowerStateSuspended),
			change: func(vm *VirtualMachine) { vm.Spec.PowerState, vm.Spec.PowerOffMode = PowerStateOff, PowerOpModeSoft },
			env:    observed(PowerStateSuspended), code: 422, path: power, typ: field.ErrorTypeInvalid},
		{name: "PWR-12 unchanged desire is no request", update: true,
			later:  func(vm *VirtualMachine) { vm.Spec.PowerState, vm.Spec.PowerOffMode = PowerStateOff, PowerOpModeSoft },
			change: func(vm *VirtualMachine) { setLabel(vm, "app", "web") }, env: observed(PowerStateSuspended), code: 200},
	})
}

func TestVirtualMachineRestartRules(t *testing.T) {
	restart := func(v string) func(*VirtualMachine) { return func(vm *VirtualMachine) { vm.Spec.NextRestartTime = v } }
	observed := func(s PowerState) func(*VMEnv) { return func(env *VMEnv) { env.ObservedPower = s } }
	const path = "spec.nextRestartTime"
	runVMCases(t, []vmCase{
		{name: "PWR-4 no restart time on create", code: 200},
		{name: "PWR-4 restart time on create", change: restart("now"), code: 422, path: path, typ: field.ErrorTypeInvalid},

		{name: "PWR-5 now converted by defaulting", update: true, change: restart("NOW"), env: observed(PowerStateOn), code: 200},

		{name: "PWR-10 restart a VM observed PoweredOn", update: true, change: restart("now"), env: observed(PowerStateOn), code: 200},
		{name: "PWR-10 restart a VM whose observed state is unknown", update: true, change: restart("now"), code: 200},
		{name: "PWR-10 restart a VM observed PoweredOff", update: true, change: restart("now"), env: observed(PowerStateOff),
			code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "PWR-10 restart a VM observed Suspended", update: true, change: restart("now"), env: observed(PowerStateSuspended),
			code: 422, path: path, typ: field.ErrorTypeInvalid},
	})
}

// PWR-5 and PWR-6 catch values that bypassed D15, so they are checked on stage 3 alone.
func TestNextRestartTimeBypassingDefaults(t *testing.T) {
	old := &VirtualMachine{Spec: VirtualMachineSpec{PowerState: PowerStateOn, NextRestartTime: "2025-05-01T00:00:00Z"}}
	tests := []struct {
		name, value string
		wantErr     bool
	}{
		{"PWR-5 unchanged value", "2025-05-01T00:00:00Z", false},
		{"PWR-5 literal now", "Now", true},
		{"PWR-6 RFC 3339 time", "2025-06-01T12:00:00.123456789Z", false},
		{"PWR-6 not a time", "tomorrow", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := &VirtualMachine{Spec: VirtualMachineSpec{PowerState: PowerStateOn, NextRestartTime: tt.value}}
			errs := validateNextRestartTime(&vmReq{New: vm, Old: old, Env: ruleEnv()})
			if !tt.wantErr {
				if len(errs) > 0 {
					t.Fatalf("errors: %v", errs)
				}
				return
			}
			checkAdmission(t, 422, errs, 422, "spec.nextRestartTime", field.ErrorTypeInvalid)
		})
	}
}

func TestVirtualMachineApplyPowerTime(t *testing.T) {
	at := func(v string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { setAnnotation(vm, AnnotationApplyPowerStateTime, v) }
	}
	const path = "metadata.annotations[vmoperator.vmware.com.protected/apply-power-state-time]"
	runVMCases(t, []vmCase{
		{name: "PWR-9 RFC 3339 instant on create", change: at("2025-06-01T12:00:00.5Z"), code: 200},
		{name: "PWR-9 not an instant on create", change: at("soon"), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "PWR-9 RFC 3339 instant on update", update: true, change: at("2025-06-01T12:00:00Z"), code: 200},
		{name: "PWR-9 not an instant on update", update: true, change: at("12:00"), code: 422, path: path, typ: field.ErrorTypeInvalid},
	})
}
