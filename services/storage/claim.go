package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// claimLoopConfig is the PersistentVolumeClaim loop: a VM's change reconciles the claims
// it names, its removal (and with it the claims it owns) every claim of its namespace
// (claimsOfVM); the resync notices a CNS volume that vanished.
func claimLoopConfig(log *slog.Logger) reconcile.Config {
	return reconcile.Config{
		Service: model.ServiceStorage, Plural: pluralClaims, Durable: model.ServiceStorage + "-claims", Workers: 4,
		Related: []string{"virtualmachines"}, Relate: claimsOfVM,
		Resync: resync,
		Logger: log,
	}
}

// inUsePoll is how often a claim whose deletion waits for a VM looks again: a detach shows
// in vCenter, which no stream announces.
const inUsePoll = 3 * time.Second

// claims provisions each PersistentVolumeClaim as a CNS volume and reports it.
type claims struct {
	js      jetstream.JetStream
	uses    *vmClaims
	volumes *volumes
	trigger *reconcile.Trigger // set before the loop runs
	now     func() time.Time
}

// reconcile is level-triggered: a deleted claim gives its volume back once unused; a claim
// whose owners are all gone is deleted; otherwise the claim gets its volume (created once,
// found by name after a crash), grows with its request, and is reported. Each change of
// its status is announced as an Event.
func (c *claims) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	var claim model.PersistentVolumeClaim
	if err := json.Unmarshal(o.Spec.Body, &claim); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	prev := c.previous(o)
	res, err := c.step(ctx, o, &claim, prev)
	if err != nil {
		return res, err
	}
	return res, c.announce(ctx, o, prev, res, claim.Spec.VolumeName)
}

// step brings the claim's volume in line and reports it.
func (c *claims) step(ctx context.Context, o reconcile.Object, claim *model.PersistentVolumeClaim, prev model.PersistentVolumeClaimStatus) (reconcile.Result, error) {
	if o.Deleting() {
		return c.release(ctx, o, claim, prev)
	}
	orphan, err := ownersGone(ctx, c.js, o.Ref.Namespace, claim.OwnerReferences)
	if err != nil {
		return reconcile.Result{}, err
	}
	if orphan {
		// The deleted record is reconciled next; until then the last report stands.
		return reconcile.Result{Status: prev}, markDeleted(ctx, c.js, o, c.now())
	}
	report := claimReport{prev: prev, now: c.now()}
	class, problem, err := c.class(ctx, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	if claim.Spec.VolumeName == "" {
		if problem != "" {
			return report.pending(reasonProvisioningFailed, problem), nil
		}
		// A VM naming the claim, or upgraded (a related change), brings it back here.
		vms, err := c.uses.vmsWithClaim(ctx, o.Ref)
		if err != nil {
			return reconcile.Result{}, err
		}
		why, err := c.awaitedRegistration(ctx, vms, o.Ref.Name)
		if err != nil {
			return reconcile.Result{}, err
		}
		if why != "" {
			return report.waitingFor(why), nil
		}
		if class.VolumeBindingMode == model.VolumeBindingWaitForFirstConsumer && len(vms) == 0 {
			return report.waiting(), nil
		}
		return c.provision(ctx, o, claim, class, report)
	}
	vol, found, err := c.volumes.byID(ctx, claim.Spec.VolumeName)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !found {
		return report.lost(claim), nil
	}
	return c.resize(ctx, claim, class, problem, vol, report)
}

// provision creates the claim's volume unless a crashed attempt did, and records its ID
// in the claim: the recorded claim is reconciled again and reported Bound.
func (c *claims) provision(ctx context.Context, o reconcile.Object, claim *model.PersistentVolumeClaim, class *model.StorageClass, report claimReport) (reconcile.Result, error) {
	name := claimVolumeName(o.Meta.UID)
	if err := c.volumes.awaitCreatesOf(ctx, name); err != nil {
		return reconcile.Result{}, err
	}
	vol, found, err := c.volumes.byName(ctx, name)
	if err != nil {
		return reconcile.Result{}, err
	}
	id := vol.ID
	if !found {
		on, problem, err := c.instanceDatastores(ctx, claim)
		if err != nil {
			return reconcile.Result{}, err
		}
		if problem != "" {
			return report.pending(reasonProvisioningFailed, problem), nil
		}
		id, err = c.volumes.create(ctx, name, class.Parameters[model.StoragePolicyIDParameter], o.Ref.Namespace, o.Ref.Name, model.ClaimRequest(claim), on)
		if vcenter.IsFault(err) {
			return report.pending(reasonProvisioningFailed, err.Error()), nil
		}
		if err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := recordVolume(ctx, c.js, o, id); err != nil {
		if errors.Is(err, events.ErrConflict) {
			err = errors.Join(err, c.dropUnrecorded(ctx, o, id))
		}
		return reconcile.Result{}, err
	}
	claim.Spec.VolumeName = id
	if !found {
		vol = volume{ID: id, Capacity: model.ClaimRequest(claim)}
	}
	return report.bound(claim, vol), nil
}

// dropUnrecorded deletes the volume id made for the claim of o when its record lost to a
// write that gave the claim another volume (a VM's image-disk registration took the claim
// over): nothing will ever record id, which no VM can have attached, and it would be left
// in CNS.
func (c *claims) dropUnrecorded(ctx context.Context, o reconcile.Object, id string) error {
	var latest model.PersistentVolumeClaim
	found, err := reconcile.LastSpecOf(ctx, c.js, o.Ref, &latest)
	if err != nil || !found || string(latest.UID) != o.Meta.UID || latest.Spec.VolumeName == "" || latest.Spec.VolumeName == id {
		return err
	}
	return c.volumes.remove(ctx, id)
}

// resize grows the volume to a request above its capacity, when the class allows it.
func (c *claims) resize(ctx context.Context, claim *model.PersistentVolumeClaim, class *model.StorageClass, problem string, vol volume, report claimReport) (reconcile.Result, error) {
	want := model.ClaimRequest(claim)
	if want.Cmp(vol.Capacity) <= 0 {
		return report.bound(claim, vol), nil
	}
	switch {
	case problem != "":
	case class.AllowVolumeExpansion == nil || !*class.AllowVolumeExpansion:
		problem = fmt.Sprintf("storage class %q does not allow volume expansion", class.Name)
	default:
		err := c.volumes.extend(ctx, vol.ID, want)
		if err != nil && !vcenter.IsFault(err) {
			return reconcile.Result{}, err
		}
		if err == nil {
			vol.Capacity = want
			return report.bound(claim, vol), nil
		}
		problem = err.Error()
	}
	report.condition(conditionResizeError, metav1.ConditionTrue, reasonResizeFailed,
		fmt.Sprintf("cannot grow the volume from %s to %s: %s", vol.Capacity.String(), want.String(), problem))
	return report.bound(claim, vol), nil
}

// release: a deleted claim waits while a VM uses it; then its volume is deleted (kept when
// the class's reclaim policy is Retain), the pvc-protection finalizer removed and the
// claim released, which lets the gateway remove it.
func (c *claims) release(ctx context.Context, o reconcile.Object, claim *model.PersistentVolumeClaim, prev model.PersistentVolumeClaimStatus) (reconcile.Result, error) {
	report := claimReport{prev: prev, now: c.now()}
	report.status.Phase = prev.Phase
	report.status.Capacity = prev.Capacity
	report.status.AccessModes = prev.AccessModes
	vol, found, err := c.volumeOf(ctx, o, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	path := ""
	if found {
		if path, err = c.volumes.diskPath(ctx, vol.ID); err != nil {
			return reconcile.Result{}, err
		}
	}
	users, err := c.users(ctx, o.Ref, path)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(users) > 0 {
		c.trigger.RequestAt(ctx, o.Ref, c.now().Add(inUsePoll))
		report.condition(conditionInUse, metav1.ConditionTrue, reasonUsedByVM,
			fmt.Sprintf("the claim is deleted once no VM uses it; in use by %s", strings.Join(users, ", ")))
		return reconcile.Result{Status: report.status}, nil
	}
	retain, err := c.retains(ctx, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	if found && !retain {
		if err := c.volumes.remove(ctx, vol.ID); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := dropProtection(ctx, c.js, o); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{Status: report.status, Released: true}, nil
}

// volumeOf is the CNS volume of a deleted claim: the one it records, or else the one a
// provisioning made before the deletion kept it from recording it (also one a creation
// still running will make).
func (c *claims) volumeOf(ctx context.Context, o reconcile.Object, claim *model.PersistentVolumeClaim) (volume, bool, error) {
	if claim.Spec.VolumeName != "" {
		return c.volumes.byID(ctx, claim.Spec.VolumeName)
	}
	name := claimVolumeName(o.Meta.UID)
	if err := c.volumes.awaitCreatesOf(ctx, name); err != nil {
		return volume{}, false, err
	}
	return c.volumes.byName(ctx, name)
}

// retains reports that the claim's class keeps volumes of deleted claims. The policy cannot
// change (model.ValidateStorageClass); a class deleted since, whose policy is no longer
// known, keeps the volume, as a class that cannot be read does: neither is a reason to
// delete data.
func (c *claims) retains(ctx context.Context, claim *model.PersistentVolumeClaim) (bool, error) {
	var sc model.StorageClass
	name := classOf(claim)
	found, err := reconcile.LastSpecOf(ctx, c.js, events.Ref{Plural: "storageclasses", Name: name}, &sc)
	if err != nil {
		return false, fmt.Errorf("read storage class %s for its reclaim policy: %w", name, err)
	}
	return !found || sc.ReclaimPolicy == "Retain", nil
}

// class reads the claim's StorageClass; problem says why it cannot provision.
func (c *claims) class(ctx context.Context, claim *model.PersistentVolumeClaim) (*model.StorageClass, string, error) {
	name := classOf(claim)
	if name == "" {
		return nil, "the claim names no storage class", nil
	}
	var sc model.StorageClass
	found, err := reconcile.LastSpecOf(ctx, c.js, events.Ref{Plural: "storageclasses", Name: name}, &sc)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("read storage class %s: %w", name, err)
	case !found:
		return nil, fmt.Sprintf("storage class %q not found", name), nil
	case sc.Parameters[model.StoragePolicyIDParameter] == "":
		return nil, fmt.Sprintf("storage class %q has no parameters.%s", name, model.StoragePolicyIDParameter), nil
	}
	return &sc, "", nil
}

func (c *claims) previous(o reconcile.Object) model.PersistentVolumeClaimStatus {
	var st model.PersistentVolumeClaimStatus
	if s := o.Slices[model.ServiceStorage]; len(s.Status) > 0 {
		_ = json.Unmarshal(s.Status, &st) // a slice we cannot read only costs transition times
	}
	return st
}

func classOf(claim *model.PersistentVolumeClaim) string {
	if claim.Spec.StorageClassName == nil {
		return ""
	}
	return *claim.Spec.StorageClassName
}
