package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachineTrySoftTimeout(t *testing.T) {
	timeout := func(v string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { setAnnotation(vm, AnnotationTrySoftTimeout, v) }
	}
	const path = "metadata.annotations[power.vmop.dev/trysoft-timeout]"
	runVMCases(t, []vmCase{
		{name: "a duration on create", change: timeout("30s"), code: 200},
		{name: "an hour on update", update: true, change: timeout("1h"), code: 200},
		{name: "not a duration", change: timeout("30"), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "zero", update: true, change: timeout("0s"), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "negative", change: timeout("-5s"), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "over an hour", update: true, change: timeout("61m"), code: 422, path: path, typ: field.ErrorTypeInvalid},
	})
}
