package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// placementStatus is what the group reads of placement's slice of a member VM.
type placementStatus struct {
	Zone       string             `json:"zone"`
	NodeName   string             `json:"nodeName"`
	Conditions []metav1.Condition `json:"conditions"`
}

// vmPlacement reports where placement put (or decided to put) a member VM and mirrors its
// PlacementReady: placement places a group's members together and says so in each VM's
// slice; the group, whose status power owns, shows it per member. A VM placement has not
// reported on yet gets neither.
func (r *groupReconciler) vmPlacement(ctx context.Context, m member, ms *model.VirtualMachineGroupMemberStatus, conds *reconcile.ConditionSet) error {
	rec, err := events.LastStatus(ctx, r.js, m.ref, model.ServicePlacement)
	if errors.Is(err, events.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read placement's status of %s: %w", m.ref, err)
	}
	if rec.Slice.UID != m.head.Metadata.UID || len(rec.Slice.Status) == 0 {
		return nil
	}
	var st placementStatus
	if err := json.Unmarshal(rec.Slice.Status, &st); err != nil {
		r.log.Warn("ignoring undecodable placement slice", "member", m.ref.String(), "err", err)
		return nil
	}
	if st.Zone != "" {
		ms.Placement = &model.VirtualMachinePlacementStatus{Zone: st.Zone, Node: st.NodeName}
	}
	if c := reconcile.FindCondition(st.Conditions, model.ConditionPlacementReady); c != nil {
		conds.Set(model.ConditionMemberPlacementReady, c.Status, c.Reason, c.Message)
	}
	return nil
}

// placementCondition is the group's PlacementReady: True once placement reported every VM
// member placed, else False naming those that are not; none when no member reported yet.
func placementCondition(members []model.VirtualMachineGroupMemberStatus) (typ string, status metav1.ConditionStatus, reason, message string, ok bool) {
	var placed, waiting []string
	for _, m := range members {
		c := reconcile.FindCondition(m.Conditions, model.ConditionMemberPlacementReady)
		switch {
		case c == nil:
		case c.Status == metav1.ConditionTrue && m.Placement != nil:
			placed = append(placed, fmt.Sprintf("%s in %s on %s", m.Name, m.Placement.Zone, m.Placement.Node))
		default:
			waiting = append(waiting, fmt.Sprintf("%s: %s (%s)", m.Name, c.Reason, c.Message))
		}
	}
	switch {
	case len(placed)+len(waiting) == 0:
		return "", "", "", "", false
	case len(waiting) > 0:
		return model.ConditionMemberPlacementReady, metav1.ConditionFalse, model.ReasonMembersNotReady,
			fmt.Sprintf("%d of %d members not placed: %s", len(waiting), len(placed)+len(waiting), strings.Join(waiting, "; ")), true
	}
	return model.ConditionMemberPlacementReady, metav1.ConditionTrue, model.ReasonTrue, strings.Join(placed, ", "), true
}
