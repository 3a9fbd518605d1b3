package power

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
)

// readyCondition is the group's Ready: True when every condition of every member is,
// else MembersNotReady naming each member's first condition that is not (api-rules §9.3).
func readyCondition(members []model.VirtualMachineGroupMemberStatus) (typ string, status metav1.ConditionStatus, reason, message string) {
	var why []string
	for _, m := range members {
		for _, c := range m.Conditions {
			if c.Status != metav1.ConditionTrue {
				why = append(why, fmt.Sprintf("%s/%s: %s %s (%s)", m.Kind, m.Name, c.Type, c.Status, c.Reason))
				break
			}
		}
	}
	if len(why) == 0 {
		return model.ConditionReady, metav1.ConditionTrue, model.ReasonTrue, ""
	}
	return model.ConditionReady, metav1.ConditionFalse, model.ReasonMembersNotReady,
		fmt.Sprintf("%d of %d members not ready: %s", len(why), len(members), strings.Join(why, "; "))
}
