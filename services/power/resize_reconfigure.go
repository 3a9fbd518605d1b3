package power

import (
	"context"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// reconfiguration is what the resize by class and the guest ID say in power's slice.
type reconfiguration struct {
	class *classSync // nil while there is no VM to compare with its class
	guest *metav1.Condition
	holds []string // what else must be applied before a power-on: hardware upgrade, boot options
}

// reconfigure upgrades the VM's hardware, resizes it to its class, sets its guest ID and
// boot options, each only while the VM is powered off; the reconcile calls it before it
// powers the VM on, so a VM going from off to on gets them first.
func (r *reconciler) reconfigure(ctx context.Context, o reconcile.Object, vm *model.VirtualMachine, obs observation, prev []metav1.Condition) (observation, reconfiguration, error) {
	var rc reconfiguration
	if obs.vm == nil {
		return obs, rc, nil
	}
	obs, hold, err := r.syncHardwareVersion(ctx, vm, obs) // upgrade.go
	if err != nil {
		return obs, rc, err
	}
	rc.addHold(hold)
	obs, cs, err := r.syncClass(ctx, o, vm, obs)
	if err != nil {
		return obs, rc, err
	}
	rc.class = &cs
	if obs, rc.guest, err = r.syncGuestID(ctx, vm.Spec.GuestID, obs, prev); err != nil {
		return obs, rc, err
	}
	obs, hold, err = r.syncBootOptions(ctx, o, vm, obs) // bootoptions.go
	rc.addHold(hold)
	return obs, rc, err
}

func (rc *reconfiguration) addHold(hold string) {
	if hold != "" {
		rc.holds = append(rc.holds, hold)
	}
}

// hold adds a resize that must precede the power-on to what keeps the VM off.
func (rc reconfiguration) hold(g *gate, st *syncState) {
	holds := rc.holds
	if rc.class != nil && rc.class.hold != "" {
		holds = append([]string{rc.class.hold}, holds...)
	}
	if len(holds) == 0 {
		return
	}
	g.waits = append(slices.Clip(g.waits), holds...)
	if st.desired == model.PowerStateOn {
		st.waits = g.waits
	}
}

// conditions adds the class and guest conditions to power's others (list), keeping the
// transition times of prev, power's previous ones.
func (rc reconfiguration) conditions(list, prev []metav1.Condition, generation int64) []metav1.Condition {
	set := reconcile.NewConditionSet(prev, generation, time.Now())
	if c := rc.class; c != nil {
		set.Set(c.cond.Type, c.cond.Status, c.cond.Reason, c.cond.Message)
	}
	if c := rc.guest; c != nil {
		set.Set(c.Type, c.Status, c.Reason, c.Message)
	}
	out := append(slices.Clip(list), set.List()...)
	slices.SortFunc(out, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	return out
}
