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
	"github.com/vmware/govmomi/crypto"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// handler reconciles one VirtualMachine at a time (the loop serialises per object).
type handler struct {
	js   jetstream.JetStream
	vc   *govmomi.Client
	kmip *crypto.ManagerKmip
	now  func() time.Time
}

// keying is what a new key needs of the reconcile: the object, crypto's slice as read,
// and the key generated for the VM and not used yet (generated.go).
type keying struct {
	o       reconcile.Object
	prev    events.Slice
	pending *generatedKey
}

// vmProps are what the handler reads of a VM.
var vmProps = []string{"config.keyId", "config.hardware.device", "runtime.powerState",
	`config.extraConfig["` + vcenter.KeyAppliedClass + `"]`}

// reconcile encrypts, rekeys and gives or takes the vTPM of a VM as its spec asks, and
// reports its encryption (status.crypto) and VirtualMachineEncryptionSynced.
//
// Exactly once: vcenter.ReadVM awaits the VM's unfinished tasks, so after a crash or a
// redelivery the VM read shows the result of a reconfigure already started, and the plan
// made from it is empty.
func (h *handler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	prev := o.Slices[model.ServiceCrypto]
	if o.Deleting() {
		// Nothing to undo: placement destroys the VM. The last report stays.
		return reconcile.ReleasedKeeping(prev), nil
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
	k := &keying{o: o, prev: prev, pending: pendingKey(prev)}
	ask, err := reconcile.ReadCryptoAsk(ctx, h.js, &vm)
	if err != nil {
		return reconcile.Result{}, err
	}

	placed, created := reconcile.Placed(o)
	// Until placement reports the VM created, every input comes as a message: a problem
	// aside (a key provider vCenter may gain), the resync has nothing to look at.
	awaited := !created
	var mvm mo.VirtualMachine
	var obj *object.VirtualMachine
	if created {
		obj, err = vcenter.ReadVM(ctx, h.vc, placed, vm.Spec.InstanceUUID, vmProps, &mvm)
		if errors.Is(err, vcenter.ErrNotFound) {
			created = false
		} else if err != nil {
			return reconcile.Result{}, err
		}
	}
	var otherClass map[string]bool // read only where disks are encrypted or rekeyed
	if created && (ask.EncryptDisks || mvm.Config != nil && mvm.Config.KeyId != nil) {
		if otherClass, err = h.otherClassVolumes(ctx, &vm); err != nil {
			return reconcile.Result{}, err
		}
	}
	s := readState(&mvm, otherClass)
	if created {
		_, sameClassResize := vm.Annotations[model.AnnotationSameClassResize]
		ask = vtpmAsApplied(ask, s, sameClassResize)
	}
	var t *target
	var prob *problem
	if ask.Any() || s.key != nil { // the key matters only to encrypt or rekey
		if t, prob, err = h.target(ctx, &vm); err != nil {
			return reconcile.Result{}, err
		}
	}

	var res outcome
	switch {
	case !created:
		// Nothing to act on yet: a problem can be told already, a VM that asks for
		// nothing is in sync.
		if prob != nil {
			res.problems = append(res.problems, *prob)
		} else if ask.Any() {
			return reconcile.Result{Status: model.VirtualMachineStatus{Conditions: conds.List()}, Record: k.pending.record(), Idle: awaited}, nil
		}
	case prob != nil && (ask.Any() || vm.Spec.Crypto != nil && vm.Spec.Crypto.EncryptionClassName != ""):
		// A class or provider that does not exist: nothing is attempted.
		res.problems = append(res.problems, *prob)
	default:
		if res, err = h.act(ctx, obj, k, &vm, ask, t, s, &mvm, otherClass); err != nil {
			return reconcile.Result{}, err
		}
	}
	res.set(conds)
	if k.pending.settled(readState(&mvm, nil).key) {
		k.pending = nil
	}
	return reconcile.Result{
		Status: model.VirtualMachineStatus{Crypto: observe(mvm.Config), Conditions: conds.List()},
		Record: k.pending.record(),
		Idle:   awaited && prob == nil,
	}, nil
}

// act plans and applies the reconfigure that brings the VM in line (s is what mvm shows),
// and reads the VM again into mvm after one.
func (h *handler) act(ctx context.Context, obj *object.VirtualMachine, k *keying, vm *model.VirtualMachine, ask reconcile.CryptoAsk, t *target, s vmState, mvm *mo.VirtualMachine, otherClass map[string]bool) (outcome, error) {
	var keyErr error
	p := makePlan(ask, t, s, func() types.CryptoKeyId {
		key, err := h.newKey(ctx, k, t)
		keyErr = err
		return key
	})
	if keyErr != nil {
		return outcome{}, keyErr
	}
	res, err := h.apply(ctx, obj, p)
	if err != nil || len(p.ops) == 0 {
		return res, err
	}
	if _, err := vcenter.ReadVM(ctx, h.vc, obj.Reference().Value, vm.Spec.InstanceUUID, vmProps, mvm); err != nil {
		return res, err
	}
	// A refused reconfigure whose work is done nonetheless (a request of a crashed
	// predecessor that reached vCenter late) is no error.
	if len(makePlan(ask, t, readState(mvm, otherClass), func() types.CryptoKeyId { return types.CryptoKeyId{} }).ops) == 0 {
		res.drop(model.ReasonReconfigureError)
	}
	return res, nil
}

// outcome is what the condition says: the problems in api-rules §8's order.
type outcome struct{ problems []problem }

// drop forgets the problem of the given reason.
func (o *outcome) drop(reason string) {
	o.problems = slices.DeleteFunc(o.problems, func(p problem) bool { return p.reason == reason })
}

// apply runs p's reconfigure, if any, and tells what stays unmet.
func (h *handler) apply(ctx context.Context, vm *object.VirtualMachine, p plan) (outcome, error) {
	var out outcome
	if len(p.ops) > 0 {
		task, err := vm.Reconfigure(ctx, p.spec)
		if err == nil {
			_, err = vcenter.WaitTask(ctx, task)
		}
		switch {
		case err != nil && vcenter.IsFault(err):
			out.problems = append(out.problems, problem{model.ReasonReconfigureError, fmt.Sprintf("Failed to %s: %v.", describe(p.ops), err)})
		case err != nil:
			return out, fmt.Errorf("%s: %w", describe(p.ops), err)
		}
	}
	if len(p.needOff) > 0 {
		out.problems = append(out.problems, problem{model.ReasonInvalidState, "Must be powered off to " + describe(p.needOff) + "."})
	}
	if p.decrypt {
		out.problems = append(out.problems, problem{model.ReasonInvalidChanges, "Cannot decrypt VM: it asks for no encryption, but VM Operator never decrypts an encrypted VM."})
	}
	return out, nil
}

// set writes VirtualMachineEncryptionSynced: True without problems, else False with the
// reasons joined by "And" (in api-rules §8's order) and the messages.
func (o outcome) set(conds *reconcile.ConditionSet) {
	if len(o.problems) == 0 {
		conds.Set(model.ConditionEncryptionSynced, metav1.ConditionTrue, "", "")
		return
	}
	order := []string{model.ReasonEncryptionInternalError, model.ReasonEncryptionClassNotFound, model.ReasonEncryptionClassInvalid,
		model.ReasonNoDefaultKeyProvider, model.ReasonInvalidState, model.ReasonInvalidChanges, model.ReasonReconfigureError}
	var reasons, messages []string
	for _, r := range order {
		for _, p := range o.problems {
			if p.reason == r {
				reasons = append(reasons, r)
				messages = append(messages, p.message)
				break
			}
		}
	}
	conds.Set(model.ConditionEncryptionSynced, metav1.ConditionFalse, strings.Join(reasons, "And"), strings.Join(messages, " "))
}

// otherClassVolumes are the CNS volume IDs of the VM's claims whose storage class is not
// the VM's: the VM's key and policy do not go over their disks. Its image disks, registered
// as claims of its own class, stay the VM's to encrypt. The claims are read in one batch.
func (h *handler) otherClassVolumes(ctx context.Context, vm *model.VirtualMachine) (map[string]bool, error) {
	var refs []events.Ref
	for _, v := range vm.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "" {
			refs = append(refs, events.Ref{Plural: "persistentvolumeclaims", Namespace: vm.Namespace, Name: v.PersistentVolumeClaim.ClaimName})
		}
	}
	out := map[string]bool{}
	if len(refs) == 0 {
		return out, nil
	}
	recs, err := events.LastSpecsOf(ctx, h.js, refs)
	if err != nil {
		return nil, fmt.Errorf("read the claims of %s/%s: %w", vm.Namespace, vm.Name, err)
	}
	for _, rec := range recs {
		var pvc model.PersistentVolumeClaim
		if rec.Op == events.OpDelete || json.Unmarshal(rec.Body, &pvc) != nil {
			continue // gone, or not a claim: no disk of its to leave alone
		}
		if pvc.Spec.VolumeName != "" && (pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != vm.Spec.StorageClass) {
			out[pvc.Spec.VolumeName] = true
		}
	}
	return out, nil
}
