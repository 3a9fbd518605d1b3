package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachineAnnotationRules(t *testing.T) {
	annotate := func(k, v string) func(*VirtualMachine) { return func(vm *VirtualMachine) { setAnnotation(vm, k, v) } }
	unannotate := func(k string) func(*VirtualMachine) { return func(vm *VirtualMachine) { delete(vm.Annotations, k) } }
	key := func(k string) string { return "metadata.annotations[" + k + "]" }
	withPolicy := func(vm *VirtualMachine) {
		vm.Spec.Reserved = &VirtualMachineReservedSpec{ResourcePolicyName: "my-policy"}
		setAnnotation(vm, AnnotationClusterModuleGroup, "control-plane")
	}
	forbidden := field.ErrorTypeForbidden
	runVMCases(t, []vmCase{
		{name: "ANN-1 instance ID set by an admin", env: asAdmin, change: annotate(AnnotationCloudInitInstanceID, "i-1"), code: 200},
		{name: "ANN-1 instance ID set by a user", change: annotate(AnnotationCloudInitInstanceID, "i-1"),
			code: 422, path: key(AnnotationCloudInitInstanceID), typ: forbidden},
		{name: "ANN-1 seed's instance ID key set by a user", change: annotate(AnnotationInstanceID, "i-1"),
			code: 422, path: key(AnnotationInstanceID), typ: forbidden},
		{name: "ANN-1 failed-over marker kept by a user", update: true, stored: annotate(AnnotationFailedOverVM, ""),
			change: annotate("app", "web"), code: 200},
		{name: "ANN-1 failed-over marker removed by a user", update: true, stored: annotate(AnnotationFailedOverVM, ""),
			change: unannotate(AnnotationFailedOverVM), code: 422, path: key(AnnotationFailedOverVM), typ: forbidden},
		{name: "ANN-1 first-boot-done added by a user", update: true, change: annotate(AnnotationFirstBootDone, "true"),
			code: 422, path: key(AnnotationFirstBootDone), typ: forbidden},
		{name: "ANN-1 mgmt proxy watermark changed by a user", update: true, stored: annotate(AnnotationMgmtProxyWatermark, "1"),
			change: annotate(AnnotationMgmtProxyWatermark, "2"), code: 422, path: key(AnnotationMgmtProxyWatermark), typ: forbidden},

		{name: "ANN-2 created-at supplied on create is overwritten by D2", change: annotate(AnnotationCreatedAtBuild, "v-forged"), code: 200},
		{name: "ANN-2 created-at changed by an admin", update: true, env: asAdmin, change: annotate(AnnotationCreatedAtBuild, "v-other"), code: 200},
		{name: "ANN-2 created-at changed by a user", update: true, change: annotate(AnnotationCreatedAtBuild, "v-other"),
			code: 422, path: key(AnnotationCreatedAtBuild), typ: forbidden},
		{name: "ANN-2 created-at removed by a user", update: true, change: unannotate(AnnotationCreatedAtSchema),
			code: 422, path: key(AnnotationCreatedAtSchema), typ: forbidden},

		{name: "ANN-3 cluster module unchanged", update: true, stored: withPolicy, change: annotate("app", "web"), code: 200},
		{name: "ANN-3 cluster module changed by a user", update: true, stored: withPolicy, change: annotate(AnnotationClusterModuleGroup, "workers"),
			code: 422, path: key(AnnotationClusterModuleGroup), typ: forbidden},

		{name: "ANN-4 cluster module with a resource policy", change: withPolicy, code: 200},
		{name: "ANN-4 cluster module without a resource policy, even for an admin", env: asAdmin, change: annotate(AnnotationClusterModuleGroup, "workers"),
			code: 422, path: key(AnnotationClusterModuleGroup), typ: forbidden},

		{name: "ANN-9 skip-delete-platform-resource set by an admin", env: asAdmin, change: annotate(AnnotationSkipDeletePlatform, ""), code: 200},
		{name: "ANN-9 skip-validation set by a user", change: annotate(AnnotationSkipValidation, ""),
			code: 422, path: key(AnnotationSkipValidation), typ: forbidden},
		{name: "ANN-9 skip-delete-platform-resource set by a user", change: annotate(AnnotationSkipDeletePlatform, ""),
			code: 422, path: key(AnnotationSkipDeletePlatform), typ: forbidden},
		{name: "ANN-9 skip-delete-platform-resource removed by a user", update: true, stored: annotate(AnnotationSkipDeletePlatform, "true"),
			change: unannotate(AnnotationSkipDeletePlatform), code: 422, path: key(AnnotationSkipDeletePlatform), typ: forbidden},
	})
}

func TestVirtualMachinePausedLabel(t *testing.T) {
	const path = "metadata.labels.vmoperator.vmware.com/paused"
	pause := func(v string) func(*VirtualMachine) { return func(vm *VirtualMachine) { setLabel(vm, LabelPaused, v) } }
	runVMCases(t, []vmCase{
		{name: "ANN-5 paused annotation set by a user", change: func(vm *VirtualMachine) { setAnnotation(vm, AnnotationPaused, "") }, code: 200},
		{name: "ANN-5 paused label set by an admin", env: asAdmin, change: pause("admin"), code: 200},
		{name: "ANN-5 paused label set by a user", change: pause("devops"), code: 422, path: path, typ: field.ErrorTypeForbidden},
		{name: "ANN-5 paused label kept by a user", update: true, stored: pause("admin"), change: func(vm *VirtualMachine) { setLabel(vm, "app", "web") }, code: 200},
		{name: "ANN-5 paused label changed by a user", update: true, stored: pause("admin"), change: pause("both"),
			code: 422, path: path, typ: field.ErrorTypeForbidden},
		{name: "ANN-5 paused label removed by a user", update: true, stored: pause("admin"), change: func(vm *VirtualMachine) { delete(vm.Labels, LabelPaused) },
			code: 422, path: path, typ: field.ErrorTypeForbidden},
	})
}

func TestVirtualMachineCheckAnnotations(t *testing.T) {
	const powerOn, del = PowerOnCheckPrefix + "backup", DeleteCheckPrefix + "backup"
	annotate := func(k, v string) func(*VirtualMachine) { return func(vm *VirtualMachine) { setAnnotation(vm, k, v) } }
	unannotate := func(k string) func(*VirtualMachine) { return func(vm *VirtualMachine) { delete(vm.Annotations, k) } }
	path := func(k string) string { return "metadata.annotations." + k }
	forbidden := field.ErrorTypeForbidden
	runVMCases(t, []vmCase{
		{name: "ANN-6 power-on check added on create by a user", change: annotate(powerOn, "wait"), code: 200},
		{name: "ANN-6 delete check added on create by a user", change: annotate(del, "keep"), code: 422, path: path(del), typ: forbidden},
		{name: "ANN-6 delete check added on create by an admin", env: asAdmin, change: annotate(del, "keep"), code: 200},
		{name: "ANN-6 power-on check added on update by a user", update: true, change: annotate(powerOn, "wait"),
			code: 422, path: path(powerOn), typ: forbidden},
		{name: "ANN-6 power-on check removed by an admin", update: true, env: asAdmin, stored: annotate(powerOn, "wait"), change: unannotate(powerOn), code: 200},
		{name: "ANN-6 power-on check removed by a user", update: true, stored: annotate(powerOn, "wait"), change: unannotate(powerOn),
			code: 422, path: path(powerOn), typ: forbidden},
		{name: "ANN-6 delete check kept by a user", update: true, stored: annotate(del, "keep"), change: annotate("app", "web"), code: 200},
		{name: "ANN-6 delete check modified by a user", update: true, stored: annotate(del, "keep"), change: annotate(del, "drop"),
			code: 422, path: path(del), typ: forbidden},
	})
}

func TestVirtualMachineZoneLabel(t *testing.T) {
	const path = "metadata.labels[topology.kubernetes.io/zone]"
	zone := func(z string) func(*VirtualMachine) { return func(vm *VirtualMachine) { setLabel(vm, LabelZone, z) } }
	runVMCases(t, []vmCase{
		{name: "ANN-8 known zone on create", change: zone("zone-a"), code: 200},
		{name: "ANN-8 unknown zone on create", change: zone("zone-x"), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "ANN-8 zone chosen on update", update: true, change: zone("zone-b"), code: 200},
		{name: "ANN-8 unknown zone chosen on update", update: true, change: zone("zone-x"), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "ANN-8 zone moved by an admin, unchecked", update: true, stored: zone("zone-a"), env: asAdmin, change: zone("zone-x"), code: 200},
		{name: "ANN-8 zone moved by a user", update: true, stored: zone("zone-a"), change: zone("zone-b"), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "ANN-8 zone removed by a user", update: true, stored: zone("zone-a"), change: func(vm *VirtualMachine) { delete(vm.Labels, LabelZone) },
			code: 422, path: path, typ: field.ErrorTypeInvalid},
	})
}
