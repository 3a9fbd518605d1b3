package power

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
)

// reasonPowerOnBlocked: VirtualMachinePowerStateSynced is False because power-on checks
// remain; the message names them.
const reasonPowerOnBlocked = "PowerOnBlocked"

// syncState is what VirtualMachinePowerStateSynced speaks about.
type syncState struct {
	desired  model.PowerState
	observed model.PowerState // "" when there is no VM to observe
	checks   map[string]string
	waits    []string
	note     string // anything else that keeps observed from desired, e.g. a failed task
	// restartNote: a restart asked of a VM in its desired state is held back (why).
	restartNote string
}

// blocked reports that power-on checks hold an existing VM off.
func (s syncState) blocked() bool {
	return s.desired == model.PowerStateOn && s.observed != "" && s.observed != model.PowerStateOn && len(s.checks) > 0
}

// condition is VirtualMachinePowerStateSynced for s (api-rules §8), without the
// generation and time a reconcile.ConditionSet adds.
func (s syncState) condition() metav1.Condition {
	c := metav1.Condition{Type: model.ConditionPowerStateSynced}
	if s.observed == s.desired && s.restartNote == "" {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, model.ReasonSynced, string(s.desired)
		return c
	}
	observed := string(s.observed)
	if observed == "" {
		observed = "none"
	}
	c.Status, c.Reason = metav1.ConditionFalse, model.ReasonNotSynced
	var why []string
	if s.blocked() {
		c.Reason = reasonPowerOnBlocked
		why = append(why, "power-on blocked by checks "+describeChecks(s.checks))
	}
	if len(s.waits) > 0 && s.observed != s.desired {
		why = append(why, "waiting for "+strings.Join(s.waits, ", "))
	}
	if s.note != "" {
		why = append(why, s.note)
	}
	if s.restartNote != "" {
		why = append(why, s.restartNote)
	}
	c.Message = fmt.Sprintf("desired %s, observed %s", s.desired, observed)
	if len(why) > 0 {
		c.Message += ": " + strings.Join(why, "; ")
	}
	return c
}
