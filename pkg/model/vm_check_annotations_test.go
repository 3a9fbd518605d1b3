package model

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Issue #4 item 4: who may add, change or remove the check annotations, every cell
// (TestVirtualMachineCheckAnnotations has the first ones).
func TestVirtualMachineCheckAnnotationsEveryCell(t *testing.T) {
	const powerOn, del = PowerOnCheckPrefix + "backup", DeleteCheckPrefix + "backup"
	annotate := func(k, v string) func(*VirtualMachine) { return func(vm *VirtualMachine) { setAnnotation(vm, k, v) } }
	unannotate := func(k string) func(*VirtualMachine) { return func(vm *VirtualMachine) { delete(vm.Annotations, k) } }
	path := func(k string) string { return "metadata.annotations." + k }
	forbidden := field.ErrorTypeForbidden
	runVMCases(t, []vmCase{
		{name: "power-on check added on create by an admin", env: asAdmin, change: annotate(powerOn, "wait"), code: 200},
		{name: "power-on check added on update by an admin", update: true, env: asAdmin, change: annotate(powerOn, "wait"), code: 200},
		{name: "power-on check kept by a user", update: true, stored: annotate(powerOn, "wait"), change: annotate("app", "web"), code: 200},
		{name: "power-on check modified by a user", update: true, stored: annotate(powerOn, "wait"), change: annotate(powerOn, "done"),
			code: 422, path: path(powerOn), typ: forbidden},
		{name: "power-on check modified by an admin", update: true, env: asAdmin, stored: annotate(powerOn, "wait"), change: annotate(powerOn, "done"), code: 200},
		{name: "delete check added on update by a user", update: true, change: annotate(del, "keep"),
			code: 422, path: path(del), typ: forbidden},
		{name: "delete check added on update by an admin", update: true, env: asAdmin, change: annotate(del, "keep"), code: 200},
		{name: "delete check modified by an admin", update: true, env: asAdmin, stored: annotate(del, "keep"), change: annotate(del, "drop"), code: 200},
		{name: "delete check removed by a user", update: true, stored: annotate(del, "keep"), change: unannotate(del),
			code: 422, path: path(del), typ: forbidden},
		{name: "delete check removed by an admin", update: true, env: asAdmin, stored: annotate(del, "keep"), change: unannotate(del), code: 200},
		{name: "other components' checks are separate keys", update: true, stored: annotate(powerOn, "wait"),
			change: annotate(PowerOnCheckPrefix+"other", "wait"), code: 422, path: path(PowerOnCheckPrefix + "other"), typ: forbidden},
	})
}

// Updates of a VM being deleted skip stage 3, except for the rules deletion obeys: the
// check annotations and skip-delete-platform-resource stay privileged.
func TestValidateDeletingVirtualMachine(t *testing.T) {
	const del, powerOn = DeleteCheckPrefix + "backup", PowerOnCheckPrefix + "ad"
	stored := func(vm *VirtualMachine) {
		setAnnotation(vm, del, "keep")
		setAnnotation(vm, powerOn, "wait")
	}
	tests := []struct {
		name       string
		privileged bool
		change     func(vm *VirtualMachine)
		wantPath   string // "" = accepted
	}{
		{"a user removes a delete check", false, func(vm *VirtualMachine) { delete(vm.Annotations, del) }, "metadata.annotations." + del},
		{"a user changes a delete check", false, func(vm *VirtualMachine) { setAnnotation(vm, del, "gone") }, "metadata.annotations." + del},
		{"a user removes a power-on check", false, func(vm *VirtualMachine) { delete(vm.Annotations, powerOn) }, "metadata.annotations." + powerOn},
		{"a user adds skip-delete-platform-resource", false, func(vm *VirtualMachine) { setAnnotation(vm, AnnotationSkipDeletePlatform, "") },
			"metadata.annotations[" + AnnotationSkipDeletePlatform + "]"},
		{"an admin removes a delete check", true, func(vm *VirtualMachine) { delete(vm.Annotations, del) }, ""},
		{"a user changes anything else, unvalidated", false, func(vm *VirtualMachine) { vm.Spec.ClassName = "" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := storedVM(t, stored)
			old.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			vm := cloneVM(t, old)
			tt.change(vm)
			env := ruleEnv()
			if tt.privileged {
				asAdmin(&env)
			}
			errs := ValidateDeletingVirtualMachine(vm, old, env)
			switch {
			case tt.wantPath == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tt.wantPath != "" && (len(errs) != 1 || errs[0].Field != tt.wantPath || errs[0].Type != field.ErrorTypeForbidden):
				t.Errorf("errors %v, want one Forbidden at %s", errs, tt.wantPath)
			}
		})
	}
}
