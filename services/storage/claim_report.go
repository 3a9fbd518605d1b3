package storage

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// The claim conditions the storage service reports, in Kubernetes' spelling where it has one.
const (
	conditionInUse            = "InUse"                 // a deletion waits for the VMs using the claim
	conditionResizeError      = "ControllerResizeError" // the volume cannot grow to the request
	conditionProvisioningFail = "ProvisioningFailed"    // no volume could be made for the claim
	conditionWaitForConsumer  = "WaitForFirstConsumer"  // the class binds once a VM names the claim

	reasonUsedByVM           = "UsedByVirtualMachine"
	reasonResizeFailed       = "VolumeExpansionFailed"
	reasonProvisioningFailed = "ProvisioningFailed"
)

// claimReport builds a claim's status slice; conditions keep their transition time from
// the previous report while their status stays.
type claimReport struct {
	prev   model.PersistentVolumeClaimStatus
	now    time.Time
	status model.PersistentVolumeClaimStatus
}

func (r *claimReport) condition(typ string, status metav1.ConditionStatus, reason, message string) {
	at := metav1.NewTime(r.now.UTC().Truncate(time.Second))
	for _, p := range r.prev.Conditions {
		if p.Type == typ && p.Status == status && p.LastTransitionTime != nil {
			at = *p.LastTransitionTime
		}
	}
	r.status.Conditions = append(r.status.Conditions, model.PersistentVolumeClaimCondition{
		Type: typ, Status: status, LastTransitionTime: &at, Reason: reason, Message: message,
	})
}

// waiting: the claim's class binds it once a VM names it, and none does yet.
func (r claimReport) waiting() reconcile.Result {
	return r.waitingFor("waiting for first consumer to be created before binding")
}

// waitingFor: the claim has no volume and waits for its consumer, as message says.
func (r claimReport) waitingFor(message string) reconcile.Result {
	r.status.Phase = model.ClaimPending
	r.condition(conditionWaitForConsumer, metav1.ConditionTrue, conditionWaitForConsumer, message)
	return reconcile.Result{Status: r.status}
}

// pending: the claim has no volume, and why.
func (r claimReport) pending(reason, message string) reconcile.Result {
	r.status.Phase = model.ClaimPending
	r.condition(conditionProvisioningFail, metav1.ConditionTrue, reason, message)
	return reconcile.Result{Status: r.status}
}

// bound: the claim has its volume, of the volume's size.
func (r claimReport) bound(claim *model.PersistentVolumeClaim, vol volume) reconcile.Result {
	r.status.Phase = model.ClaimBound
	r.status.AccessModes = claim.Spec.AccessModes
	r.status.Capacity = model.ResourceList{model.StorageRequest: vol.Capacity}
	return reconcile.Result{Status: r.status}
}

// lost: the claim's volume vanished from CNS; the last known size stays.
func (r claimReport) lost(claim *model.PersistentVolumeClaim) reconcile.Result {
	r.status.Phase = model.ClaimLost
	r.status.AccessModes = claim.Spec.AccessModes
	r.status.Capacity = r.prev.Capacity
	return reconcile.Result{Status: r.status}
}
