package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// An admin pauses a VM in vSphere (ExtraConfig vcenter.KeyAdminPause), DevOps with the
// paused annotation; the paused label says who (api-rules §4), and an admin's pause is
// the label every service's loop stops at (pkg/reconcile), a deletion too. Power, which
// reads the VM's ExtraConfig anyway, keeps the label: on each of its reconciles (a
// deletion's included), and, while the VM is paused and power's Func is not called,
// through reconcile.Config.WhilePaused. Nothing announces an admin's change but power's
// resync, which therefore bounds how soon it is seen; placement does not destroy a VM an
// admin paused meanwhile.

// whilePaused looks whether who paused o still did (reconcile.Config.WhilePaused),
// also while it is being deleted (the deletion waits for the pause): the VM's ExtraConfig
// in vCenter and the annotation, and sets the label to match. It acts on nothing else.
func (r *reconciler) whilePaused(ctx context.Context, o reconcile.Object) error {
	admin, err := r.adminPause(ctx, o)
	if err != nil {
		return err
	}
	_, err = r.keepPausedLabel(ctx, o, admin)
	return err
}

// adminPause reads whether an admin paused o's VM in vSphere: its ExtraConfig key alone,
// without waiting for the VM's tasks, which an admin may pause a VM to run. When there is
// no VM to read (not created yet, or gone, e.g. unregistered for a restore), what the
// label says of the admin stands.
func (r *reconciler) adminPause(ctx context.Context, o reconcile.Object) (bool, error) {
	placed := readInputs(o)[model.ServicePlacement]
	if !reconcile.IsTrue(placed.Conditions, model.ConditionCreated) {
		return labelledByAdmin(o), nil
	}
	ref := types.ManagedObjectReference{Type: "VirtualMachine", Value: placed.UniqueID}
	if placed.UniqueID == "" {
		var vm model.VirtualMachine
		if err := json.Unmarshal(o.Spec.Body, &vm); err != nil {
			return false, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
		}
		found, err := vcenter.FindVM(ctx, r.vc, vm.Spec.InstanceUUID)
		if errors.Is(err, vcenter.ErrNotFound) {
			return labelledByAdmin(o), nil
		}
		if err != nil {
			return false, err
		}
		ref = found.Reference()
	}
	var m mo.VirtualMachine
	err := property.DefaultCollector(r.vc.Client).RetrieveOne(ctx, ref, []string{vcenter.AdminPauseProperty}, &m)
	switch {
	case fault.Is(err, &types.ManagedObjectNotFound{}):
		return labelledByAdmin(o), nil
	case err != nil:
		return false, fmt.Errorf("read the admin pause of VM %s: %w", ref.Value, err)
	case m.Config == nil:
		return false, nil
	}
	return vcenter.AdminPaused(m.Config.ExtraConfig), nil
}

// adminOf is whether an admin paused o's VM, as obs read it; what the label says when
// there was no VM to read.
func adminOf(o reconcile.Object, obs observation) bool {
	if obs.vm == nil {
		return labelledByAdmin(o)
	}
	return obs.adminPaused
}

// labelledByAdmin: o's paused label says an admin paused it.
func labelledByAdmin(o reconcile.Object) bool {
	return model.PausedByAdminLabel(o.Meta.Labels[model.LabelPaused])
}

// keepPausedLabel sets o's paused label to say who paused it: DevOps by the annotation,
// an admin (byAdmin), both, or no label for nobody. Like placement's zone label it is a
// compare-and-swap append of the record reconciled (metadata only: the generation stays);
// a conflict is retried with the newer record. wrote: the label changed, and the record
// that says so is on its way.
func (r *reconciler) keepPausedLabel(ctx context.Context, o reconcile.Object, byAdmin bool) (wrote bool, err error) {
	_, byDevOps := o.Meta.Annotations[model.AnnotationPaused]
	want := model.PausedLabel(byDevOps, byAdmin)
	have, labelled := o.Meta.Labels[model.LabelPaused]
	if have == want && labelled == (want != "") {
		return false, nil
	}
	var body []byte
	if want == "" {
		body, err = model.DeleteMetadataEntry(o.Spec.Body, "labels", model.LabelPaused)
	} else {
		body, err = model.SetMetadataEntry(o.Spec.Body, "labels", model.LabelPaused, want)
	}
	if err != nil {
		return false, fmt.Errorf("%w: label %s: %v", events.ErrPermanent, o.Ref, err)
	}
	if _, err := events.AppendSpec(ctx, r.js, o.Ref, events.OpPut, body, o.Spec.Seq, nil); err != nil {
		return false, fmt.Errorf("set the paused label of %s to %q: %w", o.Ref, want, err)
	}
	return true, nil
}
