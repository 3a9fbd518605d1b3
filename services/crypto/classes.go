package crypto

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/vmware/govmomi/crypto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// classReconciler reports whether each EncryptionClass names a key provider, and a key,
// that vCenter has (its Ready condition); the VMs using it say the same in
// VirtualMachineEncryptionSynced.
type classReconciler struct {
	kmip *crypto.ManagerKmip
	now  func() time.Time
}

func (r *classReconciler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	prev := o.Slices[model.ServiceCrypto]
	if o.Deleting() {
		return reconcile.ReleasedKeeping(prev), nil
	}
	var ec model.EncryptionClass
	if err := json.Unmarshal(o.Spec.Body, &ec); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	prevConds, err := reconcile.SliceConditions(prev)
	if err != nil {
		prevConds = nil
	}
	conds := reconcile.NewConditionSet(prevConds, o.Meta.Generation, r.now())
	p, err := keyProblem(ctx, r.kmip, ec.Spec.KeyProvider, ec.Spec.KeyID)
	if err != nil {
		return reconcile.Result{}, err
	}
	if p != nil {
		conds.Set(model.ConditionReady, metav1.ConditionFalse, p.reason, p.message)
	} else {
		conds.Set(model.ConditionReady, metav1.ConditionTrue, "", "")
	}
	return reconcile.Result{Status: model.EncryptionClassStatus{Conditions: conds.List()}}, nil
}
