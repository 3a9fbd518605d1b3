package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The fast-deploy annotation takes direct or linked (any case); another value is refused
// at create, naming the values it takes.
func TestFastDeployAnnotation(t *testing.T) {
	annotate := func(v string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { setAnnotation(vm, AnnotationFastDeploy, v) }
	}
	path := "metadata.annotations[" + AnnotationFastDeploy + "]"
	runVMCases(t, []vmCase{
		{name: "direct", change: annotate("direct"), code: 200},
		{name: "Linked", change: annotate("Linked"), code: 200},
		{name: "a typo", change: annotate("linkd"), code: 422, path: path, typ: field.ErrorTypeNotSupported},
	})
	for _, tt := range []struct {
		value  string
		linked bool
	}{{"", true}, {"linked", true}, {"DIRECT", false}} {
		vm := &VirtualMachine{}
		if tt.value != "" {
			setAnnotation(vm, AnnotationFastDeploy, tt.value)
		}
		if got := LinkedClone(vm); got != tt.linked {
			t.Errorf("LinkedClone with %q = %v, want %v", tt.value, got, tt.linked)
		}
	}
}
