package model

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateInstanceVolumes is VOL-17: instance storage volumes come from the VM class and
// are written by the VM service; non-privileged callers may not add, change or remove
// them.
func validateInstanceVolumes(r *vmReq) field.ErrorList {
	if r.Env.Privileged {
		return nil
	}
	if !equality.Semantic.DeepEqual(instanceVolumes(r.New), instanceVolumes(r.Old)) {
		return field.ErrorList{field.Forbidden(volumesPath, "instance storage volumes may only be added, changed or removed by privileged users")}
	}
	return nil
}

// instanceVolumes are a VM's volumes that claim instance storage, by name.
func instanceVolumes(vm *VirtualMachine) map[string]VirtualMachineVolume {
	out := map[string]VirtualMachineVolume{}
	if vm == nil {
		return out
	}
	for _, v := range vm.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.InstanceVolumeClaim != nil {
			out[v.Name] = v
		}
	}
	return out
}
