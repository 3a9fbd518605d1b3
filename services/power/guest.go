package power

import (
	"context"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// syncGuestID sets the VM's guest OS to spec.guestID while the VM is powered off, which
// includes right before a power-on (vSphere changes it only then; admission forbids the
// change while the VM is desired on, PWR-8). What vSphere refuses is
// GuestIDReconfigured False Invalid (api-rules §8: present only on failure), and that ID
// is not tried again: a changed spec.guestID is. A set guest ID is seen in
// config.guestId, so a redelivery does not set it twice.
func (r *reconciler) syncGuestID(ctx context.Context, want string, obs observation, prev []metav1.Condition) (observation, *metav1.Condition, error) {
	if want == "" || obs.guest == nil || obs.guest.GuestID == want {
		return obs, nil, nil
	}
	if c := reconcile.FindCondition(prev, model.ConditionGuestIDReconfigured); c != nil && strings.HasPrefix(c.Message, rejected(want)) {
		return obs, guestCondition(c.Message), nil
	}
	if obs.power != model.PowerStateOff {
		return obs, nil, nil // set at the next power-off, or right before the next power-on
	}
	task, err := obs.vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{GuestId: want})
	if err == nil {
		_, err = vcenter.WaitTask(ctx, task)
	}
	if err != nil && !refusal(err) {
		return obs, nil, fmt.Errorf("set guest ID of VM %s: %w", obs.uniqueID(), err)
	}
	var cond *metav1.Condition
	if err != nil {
		cond = guestCondition(fmt.Sprintf("%s: %v", rejected(want), err))
	}
	obs, oerr := r.observe(ctx, obs)
	return obs, cond, oerr
}

func rejected(guestID string) string {
	return fmt.Sprintf("vSphere rejected guest ID %q", guestID)
}

func guestCondition(message string) *metav1.Condition {
	return &metav1.Condition{Type: model.ConditionGuestIDReconfigured, Status: metav1.ConditionFalse, Reason: model.ReasonInvalid, Message: message}
}
