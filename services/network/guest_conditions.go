package network

import (
	"strings"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// keyGuestBootstrap is the ExtraConfig key a guest writes its bootstrap outcome to:
// "<true|false>,<reason>,<message>" (api-rules §8 GuestBootstrap).
const keyGuestBootstrap = "guestinfo.vmservice.bootstrap.condition"

// guestConditions reports what the guest says of its bootstrap: GuestCustomization from
// guest.customizationInfo for a VM customized by vCenter (prep), and GuestBootstrap when
// the guest wrote its outcome.
func guestConditions(conds *reconcile.ConditionSet, mvm mo.VirtualMachine, prep bool) {
	if prep {
		guestCustomization(conds, mvm.Guest)
	}
	if v, ok := extraConfigOf(mvm)[keyGuestBootstrap]; ok && v != "" {
		ok, reason, msg := parseGuestBootstrap(v)
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		conds.Set(model.ConditionGuestBootstrap, status, reason, msg)
	}
}

// guestCustomization follows vCenter's customization states: pending after the task,
// running and then succeeded or failed (with the guest's error) at power-on.
func guestCustomization(conds *reconcile.ConditionSet, g *types.GuestInfo) {
	if g == nil || g.CustomizationInfo == nil {
		conds.Set(model.ConditionGuestCustomization, metav1.ConditionUnknown, model.ReasonNoGuestInfo, "")
		return
	}
	info := g.CustomizationInfo
	switch types.GuestInfoCustomizationStatus(info.CustomizationStatus) {
	case types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_SUCCEEDED:
		conds.Set(model.ConditionGuestCustomization, metav1.ConditionTrue, model.ReasonGuestCustomizationSucceeded, "")
	case types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_FAILED:
		conds.Set(model.ConditionGuestCustomization, metav1.ConditionFalse, model.ReasonGuestCustomizationFailed, info.ErrorMsg)
	case types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_RUNNING:
		conds.Set(model.ConditionGuestCustomization, metav1.ConditionFalse, model.ReasonGuestCustomizationRunning, "")
	case types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_PENDING:
		conds.Set(model.ConditionGuestCustomization, metav1.ConditionFalse, model.ReasonGuestCustomizationPending, "applied at the next power-on")
	default:
		conds.Set(model.ConditionGuestCustomization, metav1.ConditionFalse, model.ReasonGuestCustomizationIdle, "")
	}
}

// parseGuestBootstrap reads "<true|false>,<reason>,<message>"; the message may hold commas.
func parseGuestBootstrap(v string) (ok bool, reason, msg string) {
	parts := strings.SplitN(v, ",", 3)
	ok = strings.EqualFold(strings.TrimSpace(parts[0]), "true")
	if len(parts) > 1 {
		reason = strings.TrimSpace(parts[1])
	}
	if len(parts) > 2 {
		msg = strings.TrimSpace(parts[2])
	}
	if reason == "" {
		reason = "GuestBootstrap"
	}
	return ok, reason, msg
}
