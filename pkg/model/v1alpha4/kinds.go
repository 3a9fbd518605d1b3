package v1alpha4

import "github.com/vmop/vmop/pkg/model"

// Version is the served, non-stored version of the VM Operator group.
const Version = "v1alpha4"

// Kinds returns the kinds served in v1alpha4: the hub kinds with a conversion, their
// Version set to v1alpha4. The result is the caller's to modify.
func Kinds() []model.Kind {
	var out []model.Kind
	for _, k := range model.Kinds() {
		if k.Group == model.GroupVMOperator && Serves(k.Kind) {
			k.Version = Version
			out = append(out, k)
		}
	}
	return out
}

// Serves reports whether kind is served in v1alpha4.
func Serves(kind string) bool {
	_, ok := conversions[kind]
	return ok
}

// conversion is what differs for one kind between v1alpha4 and the hub. The moves work on
// decoded objects in place; schema reshapes the hub schema's JSON form into v1alpha4's.
type conversion struct {
	up     func(obj map[string]any) // v1alpha4 shape → hub shape, after pruning
	down   func(obj map[string]any) // hub shape → v1alpha4 shape, before pruning
	schema func(s map[string]any)
	// renames turn hub field paths (in error messages) into v1alpha4 ones, in order.
	renames []rename
}

var conversions = map[string]conversion{
	"VirtualMachine": virtualMachine,
}
