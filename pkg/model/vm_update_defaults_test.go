package model

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachineUpdateDefaults(t *testing.T) {
	const stamped = "2025-05-01T08:00:00Z"
	groupRef := func(name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "vmoperator.vmware.com/v1alpha5", Kind: "VirtualMachineGroup", Name: name, UID: types.UID("uid-" + name)}
	}
	tests := []struct {
		name           string
		stored, change func(vm *VirtualMachine)
		code           int
		path           string // a refusal's error path; its type is typ
		typ            field.ErrorType
		check          func(t *testing.T, vm *VirtualMachine)
	}{
		{name: "D14 class change records the class applied before",
			change: func(vm *VirtualMachine) { vm.Spec.ClassName = "bigger-vm-class" }, code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if got := vm.Annotations[AnnotationLastResizedClass]; got != `{"name":"my-vm-class"}` {
					t.Errorf("last-resized annotation = %q", got)
				}
			}},
		{name: "D14 an existing last-resized annotation is kept",
			stored: func(vm *VirtualMachine) { setAnnotation(vm, AnnotationLastResizedClass, `{"name":"older"}`) },
			change: func(vm *VirtualMachine) { vm.Spec.ClassName = "bigger-vm-class" }, code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if got := vm.Annotations[AnnotationLastResizedClass]; got != `{"name":"older"}` {
					t.Errorf("last-resized annotation = %q", got)
				}
			}},
		{name: "D14 unchanged class adds nothing", code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if _, ok := vm.Annotations[AnnotationLastResizedClass]; ok {
					t.Error("last-resized annotation added")
				}
			}},
		{name: "D15 empty restores the stored time",
			stored: func(vm *VirtualMachine) { vm.Spec.NextRestartTime = stamped }, // set by the VM service, not re-admitted
			change: func(vm *VirtualMachine) { vm.Spec.NextRestartTime = "" }, code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if vm.Spec.NextRestartTime != stamped {
					t.Errorf("nextRestartTime = %q, want %q", vm.Spec.NextRestartTime, stamped)
				}
			}},
		{name: "D15 now becomes the current time",
			change: func(vm *VirtualMachine) { vm.Spec.NextRestartTime = "Now" }, code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if want := ruleNow.Format(time.RFC3339Nano); vm.Spec.NextRestartTime != want {
					t.Errorf("nextRestartTime = %q, want %q", vm.Spec.NextRestartTime, want)
				}
			}},
		{name: "D15 now for a VM desired PoweredOff",
			stored: func(vm *VirtualMachine) { vm.Spec.PowerState = PowerStateOff },
			change: func(vm *VirtualMachine) { vm.Spec.NextRestartTime = "now" },
			code:   403, path: "spec.nextRestartTime", typ: field.ErrorTypeInvalid},
		{name: "D15 a time other than now",
			change: func(vm *VirtualMachine) { vm.Spec.NextRestartTime = "2030-01-01T00:00:00Z" },
			code:   403, path: "spec.nextRestartTime", typ: field.ErrorTypeInvalid},
		{name: "D16 interfaces are not back-filled on update, so removing them is refused (NET-15)",
			change: func(vm *VirtualMachine) { vm.Spec.Network = nil },
			code:   422, path: "spec.network.interfaces", typ: field.ErrorTypeForbidden},
		{name: "D17 leaving a group drops its owner reference",
			stored: func(vm *VirtualMachine) {
				vm.Spec.GroupName = "group-a"
				vm.OwnerReferences = []metav1.OwnerReference{groupRef("group-a"), groupRef("parent")}
			},
			change: func(vm *VirtualMachine) { vm.Spec.GroupName = "group-b" }, code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if diff := cmp.Diff([]metav1.OwnerReference{groupRef("parent")}, vm.OwnerReferences); diff != "" {
					t.Errorf("owner references (-want +got):\n%s", diff)
				}
			}},
		{name: "D17 a direct power change cancels the group's schedule",
			stored: func(vm *VirtualMachine) { setAnnotation(vm, AnnotationApplyPowerStateTime, stamped) },
			change: func(vm *VirtualMachine) { vm.Spec.PowerState = PowerStateOff }, code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if _, ok := vm.Annotations[AnnotationApplyPowerStateTime]; ok {
					t.Error("apply-power-state-time kept")
				}
			}},
		{name: "D17 a group-driven power change keeps its schedule",
			stored: func(vm *VirtualMachine) { setAnnotation(vm, AnnotationApplyPowerStateTime, stamped) },
			change: func(vm *VirtualMachine) {
				vm.Spec.PowerState = PowerStateOff
				setAnnotation(vm, AnnotationApplyPowerStateTime, "2025-06-01T12:05:00Z")
			}, code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if got := vm.Annotations[AnnotationApplyPowerStateTime]; got != "2025-06-01T12:05:00Z" {
					t.Errorf("apply-power-state-time = %q", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := storedVM(t, nil)
			if tt.stored != nil {
				tt.stored(old)
			}
			vm := cloneVM(t, old)
			if tt.change != nil {
				tt.change(vm)
			}
			env := ruleEnv()
			env.ObservedPower = PowerStateOn
			asAdmin(&env) // the privileged group service writes the schedule annotation
			code, errs := admitVM(t, vm, old, env)
			if code != tt.code {
				t.Fatalf("code = %d, want %d; errors: %v", code, tt.code, errs)
			}
			if code != 200 {
				checkAdmission(t, code, errs, tt.code, tt.path, tt.typ)
			}
			if tt.check != nil {
				tt.check(t, vm)
			}
		})
	}
}
