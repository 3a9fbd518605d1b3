package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestUpgraded(t *testing.T) {
	env := ruleEnv()
	tests := []struct {
		name  string
		ann   map[string]string
		want  bool
		nilVM bool
	}{
		{name: "nil VM", nilVM: true},
		{name: "no annotations"},
		{name: "all three", ann: map[string]string{AnnotationUpgradedToBuild: "v-test", AnnotationUpgradedToSchema: "v1alpha5", AnnotationUpgradedToFeature: "7"}, want: true},
		{name: "more feature bits", ann: map[string]string{AnnotationUpgradedToBuild: "v-test", AnnotationUpgradedToSchema: "v1alpha5", AnnotationUpgradedToFeature: "15"}, want: true},
		{name: "missing a feature bit", ann: map[string]string{AnnotationUpgradedToBuild: "v-test", AnnotationUpgradedToSchema: "v1alpha5", AnnotationUpgradedToFeature: "3"}},
		{name: "another build", ann: map[string]string{AnnotationUpgradedToBuild: "v-old", AnnotationUpgradedToSchema: "v1alpha5", AnnotationUpgradedToFeature: "7"}},
		{name: "another schema", ann: map[string]string{AnnotationUpgradedToBuild: "v-test", AnnotationUpgradedToSchema: "v1alpha4", AnnotationUpgradedToFeature: "7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var vm *VirtualMachine
			if !tt.nilVM {
				vm = &VirtualMachine{}
				vm.Annotations = tt.ann
			}
			if got := upgraded(vm, env); got != tt.want {
				t.Errorf("upgraded = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVirtualMachineUpgradeGuard(t *testing.T) {
	const uuid = "00000000-0000-4000-8000-00000000abcd"
	service := func(env *VMEnv) { env.Privileged, env.ServiceIdentity, env.UpgradeExempt = true, true, true }
	listed := func(env *VMEnv) { env.Privileged = true } // in privilegedUsers: privileged, not upgrade-exempt
	addSATA := func(vm *VirtualMachine) { vm.Spec.Hardware.SATAControllers = []SATAControllerSpec{{BusNumber: 0}} }
	const feature = "metadata.annotations[vmoperator.vmware.com/upgraded-to-feature-version]"
	runVMCases(t, []vmCase{
		{name: "ANN-7 upgrade annotations stamped by the VM service", update: true, env: service, change: markUpgraded, code: 200},
		{name: "ANN-7 upgrade annotations stamped by a privileged user", update: true, env: listed, change: markUpgraded,
			code: 422, path: feature, typ: field.ErrorTypeForbidden},
		{name: "ANN-7 upgrade annotation changed by a user", update: true, stored: markUpgraded,
			change: func(vm *VirtualMachine) { setAnnotation(vm, AnnotationUpgradedToFeature, "15") },
			code:   422, path: feature, typ: field.ErrorTypeForbidden},
		{name: "ANN-7 upgrade annotation removed by a user", update: true, stored: markUpgraded,
			change: func(vm *VirtualMachine) { delete(vm.Annotations, AnnotationUpgradedToFeature) }, code: 200},
		{name: "ANN-7 upgrade annotations on create by an admin", env: asAdmin, change: markUpgraded, code: 200},
		{name: "ANN-7 upgrade annotations on create by a user", change: markUpgraded,
			code: 422, path: feature, typ: field.ErrorTypeForbidden},

		{name: "CTL-11 controllers changed by the VM service before the upgrade", update: true, env: service, change: addSATA, code: 200},
		{name: "CTL-11 controllers changed by a user before the upgrade", update: true, change: addSATA,
			code: 422, path: "spec.hardware.sataControllers", typ: field.ErrorTypeForbidden},
		{name: "CTL-11 controllers changed by a privileged user before the upgrade", update: true, env: listed, change: addSATA,
			code: 422, path: "spec.hardware.sataControllers", typ: field.ErrorTypeForbidden},
		{name: "CTL-11 biosUUID back-filled by the VM service before the upgrade", update: true, env: service,
			later: func(vm *VirtualMachine) { vm.Spec.BiosUUID = "" }, change: func(vm *VirtualMachine) { vm.Spec.BiosUUID = uuid }, code: 200},
		{name: "CTL-11 biosUUID set by a user before the upgrade", update: true,
			later: func(vm *VirtualMachine) { vm.Spec.BiosUUID = "" }, change: func(vm *VirtualMachine) { vm.Spec.BiosUUID = uuid },
			code: 422, path: "spec.biosUUID", typ: field.ErrorTypeForbidden},
	})
}
