package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// pluralClasses: a change of a class may resize its VMs (same-vm-class-resize), so power
// reconciles a namespace's VMs when one of its classes changes.
const pluralClasses = "virtualmachineclasses"

// classSync is what the resize says about a VM: VirtualMachineClassConfigurationSynced
// (without generation and time) and, when the power-on must wait for a resize, why.
type classSync struct {
	cond metav1.Condition
	hold string
}

// targetClass is the class the spec names, as a VM would record having it.
type targetClass struct {
	applied model.AppliedClass
	hw      vcenter.ClassHardware
}

// syncClass resizes the VM to the class spec.className names (its whole ConfigSpec as at
// create, resize_merge.go; api-rules §7.4) while it is powered off, which includes right
// before a power-on: a running VM waits for its next power-off. The class the VM has is
// recorded in the VM with the configuration (vcenter.KeyAppliedClass), so a crash or a
// redelivery neither repeats nor loses a resize; the last-resized-vm-class annotation
// follows that record.
func (r *reconciler) syncClass(ctx context.Context, o reconcile.Object, vm *model.VirtualMachine, obs observation) (observation, classSync, error) {
	rec := recordOf(obs, vm)
	target, problem, err := r.targetClass(ctx, o.Ref.Namespace, vm.Spec.ClassName)
	if err != nil {
		return obs, classSync{}, err
	}
	if target == nil {
		cs := classSync{cond: classCondition(metav1.ConditionUnknown, model.ReasonClassNotFound, problem)}
		if rec.applied.Name != vm.Spec.ClassName {
			cs.hold = "the resize to class " + vm.Spec.ClassName + " (" + problem + ")"
		}
		return obs, cs, nil
	}
	_, sameClass := vm.Annotations[model.AnnotationSameClassResize]
	reason := resizeReason(rec.applied, target.applied, sameClass)
	switch {
	case reason == "":
		return obs, classSync{cond: classCondition(metav1.ConditionTrue, "", "")}, r.syncAnnotation(ctx, o, vm, rec, sameClass)
	case reason == model.ReasonClassUpdated:
		msg := fmt.Sprintf("VirtualMachineClass %s changed since the VM got it; annotation %s resizes the VM to it",
			target.applied.Name, model.AnnotationSameClassResize)
		return obs, classSync{cond: classCondition(metav1.ConditionFalse, reason, msg)}, r.syncAnnotation(ctx, o, vm, rec, sameClass)
	case obs.power != model.PowerStateOff:
		// Not naming the state: a power-off this reconcile issues next would make it stale.
		msg := fmt.Sprintf("the resize to class %s waits for the VM to be powered off", target.applied.Name)
		return obs, classSync{cond: classCondition(metav1.ConditionFalse, reason, msg)}, nil
	}

	// obs was read after the VM's unfinished tasks: a resize issued before a crash has
	// been recorded in it (rec) and is not made again.
	if err := r.resize(ctx, obs, rec, target, vm.Spec); err != nil {
		if !vcenter.IsFault(err) {
			return obs, classSync{}, err
		}
		msg := fmt.Sprintf("the resize to class %s failed: %v", target.applied.Name, err)
		r.log.Warn("resize failed", "vm", obs.uniqueID(), "class", target.applied.Name, "err", err)
		return obs, classSync{cond: classCondition(metav1.ConditionFalse, reason, msg), hold: msg}, nil
	}
	if obs, err = r.observe(ctx, obs); err != nil {
		return obs, classSync{}, err
	}
	rec.applied, rec.recorded = target.applied, true
	return obs, classSync{cond: classCondition(metav1.ConditionTrue, "", "")}, r.syncAnnotation(ctx, o, vm, rec, sameClass)
}

// resizeReason is why the VM's configuration must follow target, "" when it need not:
// ClassNameChanged, SameClassResize, or ClassUpdated when the class object changed but
// the VM has not opted in to follow it (then nothing is resized, as upstream does).
func resizeReason(applied, target model.AppliedClass, sameClass bool) string {
	switch {
	case applied.Name != target.Name:
		return model.ReasonClassNameChanged
	case applied.UID == target.UID && applied.Generation == target.Generation:
		return ""
	case sameClass:
		return model.ReasonSameClassResize
	case applied.UID == "":
		return "" // a VM that records no class version: nothing tells that it differs
	}
	return model.ReasonClassUpdated
}

func classCondition(status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: model.ConditionClassConfigurationSynced, Status: status, Reason: reason, Message: message}
}

// targetClass reads the class name names in namespace; nil with the problem when it does
// not exist or is no usable class.
func (r *reconciler) targetClass(ctx context.Context, namespace, name string) (*targetClass, string, error) {
	ref := events.Ref{Plural: pluralClasses, Namespace: namespace, Name: name}
	spec, err := events.LastSpec(ctx, r.js, ref)
	switch {
	case errors.Is(err, events.ErrNotFound), err == nil && spec.Op == events.OpDelete:
		return nil, fmt.Sprintf("VirtualMachineClass %s not found in namespace %s", name, namespace), nil
	case err != nil:
		return nil, "", err
	}
	var cls model.VirtualMachineClass
	if err := json.Unmarshal(spec.Body, &cls); err != nil {
		return nil, fmt.Sprintf("VirtualMachineClass %s: %v", name, err), nil
	}
	hw, err := vcenter.ClassHardwareOf(cls.Spec)
	if err != nil {
		return nil, fmt.Sprintf("VirtualMachineClass %s: %v", name, err), nil
	}
	return &targetClass{applied: model.AppliedClassOf(name, &cls), hw: hw}, "", nil
}

// resize reconfigures the VM to target's class (resizeSpec) and records target in the
// same task, so the record says exactly what the VM has.
func (r *reconciler) resize(ctx context.Context, obs observation, rec vmRecord, target *targetClass, spec model.VirtualMachineSpec) error {
	vm := obs.vm
	var hostMHz int64
	if target.hw.NeedsHostMHz() {
		var err error
		if hostMHz, err = coreMHz(ctx, vm, rec.host); err != nil {
			return err
		}
	}
	task, err := vm.Reconfigure(ctx, resizeSpec(target, hostMHz, obs.hw, spec))
	if err == nil {
		_, err = vcenter.WaitTask(ctx, task)
	}
	if err != nil {
		return fmt.Errorf("resize VM %s to class %s: %w", vm.Reference().Value, target.applied.Name, err)
	}
	return nil
}

func completeAllocation(a *types.ResourceAllocationInfo) *types.ResourceAllocationInfo {
	var out types.ResourceAllocationInfo
	if a != nil {
		out = *a
	}
	if out.Shares == nil {
		out.Shares = &types.SharesInfo{Level: types.SharesLevelNormal}
	}
	if out.Reservation == nil {
		out.Reservation = types.NewInt64(0)
	}
	if out.Limit == nil {
		out.Limit = types.NewInt64(-1)
	}
	return &out
}

// syncAnnotation keeps the last-resized-vm-class annotation equal to the class the VM
// records (api-rules §4: set by D14, then by the VM service), so status.class, which
// placement derives from it, names the class applied. Only an object that has the
// annotation (its class name changed once) or follows its class (same-vm-class-resize)
// gets it. Like placement's zone label it is a compare-and-swap append of the record
// reconciled; a conflict is retried with the newer one.
func (r *reconciler) syncAnnotation(ctx context.Context, o reconcile.Object, vm *model.VirtualMachine, rec vmRecord, sameClass bool) error {
	current, present := vm.Annotations[model.AnnotationLastResizedClass]
	if !rec.recorded || !(present || sameClass) || current == rec.applied.String() {
		return nil
	}
	body, err := model.SetMetadataEntry(o.Spec.Body, "annotations", model.AnnotationLastResizedClass, rec.applied.String())
	if err != nil {
		return fmt.Errorf("%w: annotate %s: %v", events.ErrPermanent, o.Ref, err)
	}
	if _, err := events.AppendSpec(ctx, r.js, o.Ref, events.OpPut, body, o.Spec.Seq, nil); err != nil {
		return fmt.Errorf("set %s of %s: %w", model.AnnotationLastResizedClass, o.Ref, err)
	}
	return nil
}
