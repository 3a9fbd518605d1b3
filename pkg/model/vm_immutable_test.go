package model

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachineImmutableFields(t *testing.T) {
	const otherUUID = "00000000-0000-4000-8000-00000000beef"
	withPolicy := func(name string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.Reserved = &VirtualMachineReservedSpec{ResourcePolicyName: name} }
	}
	zoneAffinity := func(vm *VirtualMachine) {
		vm.Spec.GroupName = "my-group"
		vm.Spec.Affinity = &AffinitySpec{VMAffinity: &VMAffinitySpec{RequiredDuringSchedulingPreferredDuringExecution: []VMAffinityTerm{
			{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: TopologyKeyZone}}}}
	}
	runVMCases(t, []vmCase{
		{name: "IMM-1 imageName unchanged", update: true, change: func(vm *VirtualMachine) { setLabel(vm, "app", "web") }, code: 200},
		{name: "IMM-1 imageName changed", update: true, change: func(vm *VirtualMachine) { vm.Spec.ImageName = "ubuntu-24.04" },
			code: 422, path: "spec.imageName", typ: field.ErrorTypeInvalid},
		{name: "IMM-2 image unchanged", update: true, change: func(vm *VirtualMachine) {
			vm.Spec.Image = &ImageRef{Kind: "VirtualMachineImage", Name: "vmi-0a0044d7c690bcbea"}
		}, code: 200},
		{name: "IMM-2 image changed", update: true, change: func(vm *VirtualMachine) { vm.Spec.Image.Name = "vmi-1111" },
			code: 422, path: "spec.image", typ: field.ErrorTypeInvalid},
		{name: "IMM-3 storageClass unchanged", update: true, change: func(vm *VirtualMachine) { vm.Spec.StorageClass = "my-storage-class" }, code: 200},
		{name: "IMM-3 storageClass changed", update: true, change: func(vm *VirtualMachine) { vm.Spec.StorageClass = "my-encrypted-storage-class" },
			code: 422, path: "spec.storageClass", typ: field.ErrorTypeInvalid},
		{name: "IMM-4 resource policy unchanged", update: true, stored: withPolicy("my-policy"), change: withPolicy("my-policy"), code: 200},
		{name: "IMM-4 resource policy added", update: true, change: withPolicy("my-policy"),
			code: 422, path: "spec.reserved.resourcePolicyName", typ: field.ErrorTypeInvalid},
		{name: "IMM-4 resource policy removed", update: true, stored: withPolicy("my-policy"), change: func(vm *VirtualMachine) { vm.Spec.Reserved = nil },
			code: 422, path: "spec.reserved.resourcePolicyName", typ: field.ErrorTypeInvalid},
		{name: "IMM-5 affinity unchanged", update: true, stored: zoneAffinity, change: zoneAffinity, code: 200},
		{name: "IMM-5 empty affinity equals none", update: true, change: func(vm *VirtualMachine) { vm.Spec.Affinity = &AffinitySpec{} }, code: 200},
		{name: "IMM-5 affinity changed", update: true, stored: zoneAffinity,
			change: func(vm *VirtualMachine) {
				vm.Spec.Affinity.VMAffinity.RequiredDuringSchedulingPreferredDuringExecution[0].LabelSelector.MatchLabels["app"] = "web"
			},
			code: 422, path: "spec.affinity", typ: field.ErrorTypeForbidden},

		{name: "ID-4 biosUUID unchanged", update: true, env: asAdmin, change: func(vm *VirtualMachine) { setLabel(vm, "app", "web") }, code: 200},
		{name: "ID-4 biosUUID changed", update: true, env: asAdmin, change: func(vm *VirtualMachine) { vm.Spec.BiosUUID = otherUUID },
			code: 422, path: "spec.biosUUID", typ: field.ErrorTypeInvalid},
		{name: "ID-5 instanceUUID filled in while empty", update: true, env: asAdmin, later: func(vm *VirtualMachine) { vm.Spec.InstanceUUID = "" },
			change: func(vm *VirtualMachine) { vm.Spec.InstanceUUID = otherUUID }, code: 200},
		{name: "ID-5 instanceUUID changed", update: true, change: func(vm *VirtualMachine) { vm.Spec.InstanceUUID = otherUUID },
			code: 422, path: "spec.instanceUUID", typ: field.ErrorTypeInvalid},
	})
}

func TestVirtualMachineIdentifiers(t *testing.T) {
	const uuid = "00000000-0000-4000-8000-00000000abcd"
	runVMCases(t, []vmCase{
		{name: "ID-1 instanceUUID chosen by a privileged user", env: asAdmin, change: func(vm *VirtualMachine) { vm.Spec.InstanceUUID = uuid }, code: 200},
		{name: "ID-1 instanceUUID chosen by a user", change: func(vm *VirtualMachine) { vm.Spec.InstanceUUID = uuid },
			code: 403, path: "spec.instanceUUID", typ: field.ErrorTypeForbidden},
		{name: "ID-2 biosUUID chosen by a privileged user", env: asAdmin, change: func(vm *VirtualMachine) { vm.Spec.BiosUUID = uuid }, code: 200},
		{name: "ID-2 biosUUID chosen by a user", change: func(vm *VirtualMachine) { vm.Spec.BiosUUID = uuid },
			code: 403, path: "spec.biosUUID", typ: field.ErrorTypeForbidden},
		{name: "ID-3 biosUUID not a UUID (stage 1 catches it first)", env: asAdmin, change: func(vm *VirtualMachine) { vm.Spec.BiosUUID = "not-a-uuid" },
			code: 422, path: "spec.biosUUID", typ: field.ErrorTypeInvalid},
	})
	// ID-3 itself, for objects that reach stage 3 without stage 1.
	for _, tt := range []struct {
		name, id string
		wantErr  bool
	}{{"ID-3 UUID", uuid, false}, {"ID-3 not a UUID", "{" + uuid + "}", true}} {
		t.Run(tt.name+" at stage 3", func(t *testing.T) {
			vm := &VirtualMachine{Spec: VirtualMachineSpec{BiosUUID: tt.id}}
			errs := validateBiosUUIDFormat(&vmReq{New: vm, Env: ruleEnv()})
			if got := len(errs) > 0; got != tt.wantErr {
				t.Fatalf("errors = %v, want error %v", errs, tt.wantErr)
			}
			if tt.wantErr {
				checkAdmission(t, 422, errs, 422, "spec.biosUUID", field.ErrorTypeInvalid)
			}
		})
	}
}

func TestVirtualMachineImageAndClass(t *testing.T) {
	runVMCases(t, []vmCase{
		{name: "IMG-1 image resolved from imageName", code: 200},
		{name: "IMG-1 image given without imageName", change: func(vm *VirtualMachine) {
			vm.Spec.ImageName, vm.Spec.Image = "", &ImageRef{Kind: KindVirtualMachineImage, Name: "vmi-1111"}
		}, code: 200},
		{name: "IMG-2 image kind given", change: func(vm *VirtualMachine) {
			vm.Spec.Image = &ImageRef{Kind: KindVirtualMachineImage, Name: "vmi-0a0044d7c690bcbea"}
		}, code: 200},
		{name: "IMG-3 cluster image kind", change: func(vm *VirtualMachine) {
			vm.Spec.ImageName, vm.Spec.Image = "", &ImageRef{Kind: KindClusterVirtualMachineImage, Name: "vmi-cccc"}
		}, code: 200},
		{name: "IMG-1 no image", change: func(vm *VirtualMachine) { vm.Spec.ImageName = "" },
			code: 422, path: "spec.image", typ: field.ErrorTypeRequired},
		{name: "IMG-2 image without kind", change: func(vm *VirtualMachine) { vm.Spec.ImageName, vm.Spec.Image = "", &ImageRef{Name: "vmi-cccc"} },
			code: 422, path: "spec.image.kind", typ: field.ErrorTypeRequired},
		{name: "IMG-3 image of another kind", change: func(vm *VirtualMachine) {
			vm.Spec.ImageName, vm.Spec.Image = "", &ImageRef{Kind: "VirtualMachineSnapshot", Name: "vmi-cccc"}
		}, code: 422, path: "spec.image.kind", typ: field.ErrorTypeInvalid},

		{name: "CLS-1 class named", code: 200},
		{name: "CLS-1 no class", change: func(vm *VirtualMachine) { vm.Spec.ClassName = "" },
			code: 422, path: "spec.className", typ: field.ErrorTypeRequired},
		{name: "CLS-2 class changed (resize)", update: true, change: func(vm *VirtualMachine) { vm.Spec.ClassName = "bigger-vm-class" }, code: 200},
		{name: "CLS-2 class emptied", update: true, change: func(vm *VirtualMachine) { vm.Spec.ClassName = "" },
			code: 422, path: "spec.className", typ: field.ErrorTypeRequired},
	})
}
