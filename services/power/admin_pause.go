package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// An admin pauses a VM in vSphere (ExtraConfig vcenter.KeyAdminPause), DevOps with the
// paused annotation; the paused label says who (api-rules §4), and an admin's pause is
// the label every service's loop stops at (pkg/reconcile). Power, which reads the VM's
// ExtraConfig anyway, keeps the label: on each of its reconciles, and, while the VM is
// paused and power's Func is not called, through reconcile.Config.WhilePaused. Nothing
// announces an admin's change but power's resync, which therefore bounds how soon it is
// seen.

// whilePaused looks whether who paused o still did (reconcile.Config.WhilePaused):
// the VM's ExtraConfig in vCenter and the annotation, and sets the label to match. It
// acts on nothing else.
func (r *reconciler) whilePaused(ctx context.Context, o reconcile.Object) error {
	if o.Deleting() {
		return nil // the deletion waits for the pause; the label goes with the object
	}
	var vm model.VirtualMachine
	if err := json.Unmarshal(o.Spec.Body, &vm); err != nil {
		return fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	admin := false
	placed := readInputs(o)[model.ServicePlacement]
	if reconcile.IsTrue(placed.Conditions, model.ConditionCreated) {
		obs, err := findVM(ctx, r.vc, vm.Spec.InstanceUUID, placed.UniqueID)
		switch {
		case errors.Is(err, errNoVM):
		case err != nil:
			return err
		default:
			admin = obs.adminPaused
		}
	}
	_, err := r.keepPausedLabel(ctx, o, admin)
	return err
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
