package power

import (
	"slices"
	"strings"

	"github.com/vmop/vmop/pkg/model"
)

// withoutVolumesUnlessAny drops the wait for storage's VirtualMachineHardwareVolumesVerified
// when the VM names no claim in spec.volumes: only a VM with volumes waits for them to be
// attached before it powers on.
func withoutVolumesUnlessAny(vm *model.VirtualMachine, waits []string) []string {
	if slices.ContainsFunc(vm.Spec.Volumes, func(v model.VirtualMachineVolume) bool {
		return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != ""
	}) {
		return waits
	}
	return slices.DeleteFunc(waits, func(w string) bool {
		return strings.HasPrefix(w, model.ConditionHardwareVolumesVerified+" (")
	})
}
