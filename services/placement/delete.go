package placement

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// remove is the VM's deletion: nothing is destroyed while a delete.check annotation
// remains; then the VM is powered off hard and destroyed (or, with the privileged
// skip-delete-platform-resource annotation, only released from vmop's management), and the
// slice says Released so the gateway may remove the object.
func (r *reconciler) remove(ctx context.Context, id vmIdentity, vm *model.VirtualMachine, prev model.VirtualMachineStatus, conds *conditions) (reconcile.Result, error) {
	st := prev
	conds.keep(model.ConditionClassReady, model.ConditionImageReady, model.ConditionPlacementReady, model.ConditionCreated)
	result := func(released bool) (reconcile.Result, error) {
		st.Conditions = conds.list()
		return reconcile.Result{Status: &st, Released: released}, nil
	}
	if checks := deleteChecks(vm.Annotations); len(checks) > 0 {
		conds.fail(model.ConditionDeleteChecksCleared, model.ReasonDeleteChecksPending,
			"the VM is not destroyed while delete checks remain: "+strings.Join(checks, ", "))
		return result(false)
	}
	conds.ok(model.ConditionDeleteChecksCleared)

	t, err := r.topology(ctx, false)
	if err != nil {
		return reconcile.Result{}, err
	}
	unmarked := func() (bool, error) { // asked only of a VM found by name without vmop's keys
		if !createAttempted(prev.Conditions) {
			return false, nil
		}
		return r.fromTemplateItem(ctx, id.namespace, vm.Spec.Image)
	}
	v, _, err := r.findVM(ctx, t, id, prev.UniqueID, vm.Spec.InstanceUUID, searchByName(prev.Conditions, true, r.now(), r.grace), unmarked)
	if errors.Is(err, errForeignVM) {
		v, err = nil, nil // the VM with our name is not ours: nothing of ours to destroy
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	// findVM read the VM after its unfinished tasks: a power-off or destroy started before
	// a crash (or another service's task) is not issued a second time on top of itself.
	if v == nil {
		if started, inFlight := creating(prev.Conditions, r.now(), r.grace); inFlight {
			return reconcile.Result{}, fmt.Errorf("create of %s/%s started at %s may still make a VM; waiting before releasing",
				id.namespace, id.name, started.Format(time.RFC3339))
		}
		return result(true) // never created, or already destroyed
	}
	if v.adminPaused {
		// An admin paused it in vSphere: power labels it so, which pauses every service,
		// this deletion too, until the admin lifts it (api-rules §4).
		conds.fail(model.ConditionReconcileReady, model.ReasonReconcilePaused, reconcile.PausedMessage(model.PausedByAdmin))
		return result(false)
	}
	if _, skip := vm.Annotations[model.AnnotationSkipDeletePlatform]; skip {
		// Left in vCenter, but out of vmop's cluster rules first: nothing of vmop's leaves
		// them later, and they would keep it (and the rules its peers leave behind).
		if err := r.leaveZoneRules(ctx, t, v, prev.Zone); err != nil {
			return reconcile.Result{}, fmt.Errorf("take VM %s of %s/%s out of its cluster rules: %w", v.ref.Value, id.namespace, id.name, err)
		}
		if err := r.unmanage(ctx, id, v); err != nil {
			return reconcile.Result{}, err
		}
		return result(true)
	}
	if err := r.powerOff(ctx, id, v); err != nil {
		return reconcile.Result{}, fmt.Errorf("power off VM %s of %s/%s: %w", v.ref.Value, id.namespace, id.name, err)
	}
	if err := r.keepVolumes(ctx, id, v); err != nil {
		return reconcile.Result{}, fmt.Errorf("take the volumes off VM %s of %s/%s: %w", v.ref.Value, id.namespace, id.name, err)
	}
	if err := r.leaveZoneRules(ctx, t, v, prev.Zone); err != nil {
		return reconcile.Result{}, fmt.Errorf("take VM %s of %s/%s out of its cluster rules: %w", v.ref.Value, id.namespace, id.name, err)
	}
	if err := r.destroy(ctx, id, v); err != nil {
		return reconcile.Result{}, fmt.Errorf("destroy VM %s of %s/%s: %w", v.ref.Value, id.namespace, id.name, err)
	}
	return result(true)
}

// deleteChecks lists the pending delete checks as "component (reason)", sorted.
func deleteChecks(annotations map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if component, ok := strings.CutPrefix(k, model.DeleteCheckPrefix); ok {
			out = append(out, fmt.Sprintf("%s (%s)", component, annotations[k]))
		}
	}
	return out
}

// powerOff turns the VM off hard; a VM already off is fine.
func (r *reconciler) powerOff(ctx context.Context, id vmIdentity, v *vmState) error {
	if v.powerState == types.VirtualMachinePowerStatePoweredOff {
		return nil
	}
	return traced(ctx, spanPowerOff, func(ctx context.Context) error {
		task, err := object.NewVirtualMachine(r.vc.c.Client, v.ref).PowerOff(ctx)
		if err == nil {
			_, err = vcenter.WaitTask(ctx, task)
		}
		if isInvalidPowerState(err) || isNotFound(err) {
			return nil
		}
		return err
	}, objectAttr(id.namespace, id.name))
}

func (r *reconciler) destroy(ctx context.Context, id vmIdentity, v *vmState) error {
	return traced(ctx, spanDestroy, func(ctx context.Context) error {
		task, err := object.NewVirtualMachine(r.vc.c.Client, v.ref).Destroy(ctx)
		if err == nil {
			_, err = vcenter.WaitTask(ctx, task)
		}
		if isNotFound(err) {
			return nil
		}
		return err
	}, objectAttr(id.namespace, id.name))
}

// unmanage strips vmop's ExtraConfig keys, leaving the VM to whoever takes it over.
func (r *reconciler) unmanage(ctx context.Context, id vmIdentity, v *vmState) error {
	cs := types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
		&types.OptionValue{Key: vcenter.KeyObject, Value: ""},
		&types.OptionValue{Key: vcenter.KeyUID, Value: ""},
	}}
	if err := r.reconfigure(ctx, id, v.ref, cs); !isNotFound(err) {
		return err
	}
	return nil
}

func isInvalidPowerState(err error) bool {
	return err != nil && fault.Is(err, &types.InvalidPowerState{})
}

// fromTemplateItem says whether the VM's image is a VM template item, whose deploy makes
// a VM before vmop's keys are given to it; false for an image that is gone (what its
// deploy made cannot be told from a VM someone else made: it is left, not destroyed).
func (r *reconciler) fromTemplateItem(ctx context.Context, namespace string, ref *model.ImageRef) (bool, error) {
	img, err := r.resolveImage(ctx, namespace, ref, newConditions(nil, 0, r.now()))
	if err != nil {
		return false, fmt.Errorf("read the image of a VM in %s: %w", namespace, err)
	}
	return img != nil && img.fromTemplateItem(), nil
}
