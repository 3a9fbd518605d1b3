package power

import (
	"errors"
	"testing"

	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/types"
)

// vCenter refusing what an operation asks (a fault) is reported and not retried, and a
// guest ID it refuses is not tried again; another task holding the VM (TaskInProgress, a
// fault too) or vCenter out of reach is retried. vcsim never answers TaskInProgress, so
// the faults are vCenter's task errors as govmomi returns them.
func TestRefusalIsAFaultOtherThanABusyVM(t *testing.T) {
	failed := func(f types.BaseMethodFault) error {
		return task.Error{LocalizedMethodFault: &types.LocalizedMethodFault{Fault: f, LocalizedMessage: "x"}}
	}
	for _, tc := range []struct {
		name    string
		err     error
		refusal bool
	}{
		{"invalid guest ID", failed(&types.InvalidArgument{InvalidProperty: "guestId"}), true},
		{"another task holds the VM", failed(&types.TaskInProgress{}), false},
		{"vCenter out of reach", errors.New("connection reset by peer"), false},
	} {
		if got := refusal(tc.err); got != tc.refusal {
			t.Errorf("%s: refusal %v, want %v", tc.name, got, tc.refusal)
		}
		if refused := errors.Is(classify("reconfigure", tc.err), errRefused); refused != tc.refusal {
			t.Errorf("%s: classified refused %v, want %v", tc.name, refused, tc.refusal)
		}
	}
}
