package crypto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/vim25/mo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// handler reconciles one VirtualMachine at a time (the loop serialises per object).
type handler struct {
	js  jetstream.JetStream
	vc  *govmomi.Client
	now func() time.Time
}

// reconcile reports the VM's encryption and whether it is what the spec asks for.
func (h *handler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	prev := o.Slices[model.ServiceCrypto]
	if o.Deleting() {
		// Nothing to undo: placement destroys the VM. The last report stays.
		return reconcile.Result{Status: previousStatus(prev), Released: true}, nil
	}
	var vm model.VirtualMachine
	if err := json.Unmarshal(o.Spec.Body, &vm); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	prevConds, err := reconcile.SliceConditions(prev)
	if err != nil {
		prevConds = nil // a slice we cannot read only costs transition times
	}
	conds := reconcile.NewConditionSet(prevConds, o.Meta.Generation, h.now())
	wanted, err := h.wanted(ctx, &vm)
	if err != nil {
		return reconcile.Result{}, err
	}

	placed, created := reconcile.Placed(o)
	if !created {
		// Nothing to observe yet; a request for encryption can be answered already.
		if wanted != "" {
			synced(conds, wanted, nil)
		}
		return reconcile.Result{Status: model.VirtualMachineStatus{Conditions: conds.List()}}, nil
	}
	var mvm mo.VirtualMachine
	_, err = vcenter.ReadVM(ctx, h.vc, placed, vm.Spec.InstanceUUID, []string{"config.keyId", "config.hardware.device"}, &mvm)
	if errors.Is(err, vcenter.ErrNotFound) {
		if wanted != "" {
			synced(conds, wanted, nil)
		}
		return reconcile.Result{Status: model.VirtualMachineStatus{Conditions: conds.List()}}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	observed := observe(mvm.Config)
	synced(conds, wanted, observed)
	return reconcile.Result{Status: model.VirtualMachineStatus{Crypto: observed, Conditions: conds.List()}}, nil
}

// wanted says what asks for encryption ("" when nothing does): an encryption class, or a
// storage class whose policy encrypts (the label the storage classes carry, api-rules §9.6).
func (h *handler) wanted(ctx context.Context, vm *model.VirtualMachine) (string, error) {
	var why []string
	if c := vm.Spec.Crypto; c != nil && c.EncryptionClassName != "" {
		why = append(why, fmt.Sprintf("encryption class %q", c.EncryptionClassName))
	}
	if name := vm.Spec.StorageClass; name != "" {
		rec, err := events.LastSpec(ctx, h.js, events.Ref{Plural: "storageclasses", Name: name})
		switch {
		case errors.Is(err, events.ErrNotFound):
		case err != nil:
			return "", fmt.Errorf("read storage class %s: %w", name, err)
		case rec.Op != events.OpDelete:
			var sc model.StorageClass
			if json.Unmarshal(rec.Body, &sc) == nil && sc.Labels[model.EncryptionEnabledLabel] == "true" {
				why = append(why, fmt.Sprintf("encryption storage class %q", name))
			}
		}
	}
	return strings.Join(why, " and "), nil
}

// synced sets VirtualMachineEncryptionSynced. Nothing asked: True. Asked: True once the
// VM's home is encrypted; until then False with InvalidState, since vmop does not encrypt
// VMs yet (observed is nil before the VM exists).
func synced(conds *reconcile.ConditionSet, wanted string, observed *model.VirtualMachineCryptoStatus) {
	switch {
	case wanted == "":
		conds.Set(model.ConditionEncryptionSynced, metav1.ConditionTrue, "", "")
	case observed != nil && slices.Contains(observed.Encrypted, model.VirtualMachineEncryptionTypeConfig):
		conds.Set(model.ConditionEncryptionSynced, metav1.ConditionTrue, "", "")
	default:
		conds.Set(model.ConditionEncryptionSynced, metav1.ConditionFalse, model.ReasonInvalidState, fmt.Sprintf(
			"the %s asks to encrypt the VM, but vmop does not encrypt VMs yet: encryption arrives in a later release", wanted))
	}
}

func previousStatus(prev events.Slice) any {
	if len(prev.Status) == 0 {
		return nil
	}
	return prev.Status
}
