package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// reconciler is the service's state: one vCenter session and what it caches of the
// inventory.
type reconciler struct {
	js       jetstream.JetStream
	vc       *session
	topo     topologyCache
	folders  folderCache
	tags     tagCache
	vms      *events.SpecIndex[headed]  // the VMs' records, as affinity reads them (affinity_peers.go)
	vmGroups *events.SpecIndex[vmGroup] // the groups' records (group_place.go)
	now      func() time.Time
	grace    time.Duration // createGrace
	timeout  time.Duration // createTimeout
}

func newReconciler(js jetstream.JetStream, vc *session) *reconciler {
	return &reconciler{js: js, vc: vc, folders: folderCache{m: map[string]*object.Folder{}},
		vms: events.NewSpecIndex(js, pluralVMs, headOf), vmGroups: events.NewSpecIndex(js, pluralGroups, groupOf), now: time.Now, grace: createGrace, timeout: createTimeout}
}

// reconcile is the service's reconcile.Func: the VM's latest spec and placement's previous
// slice in, placement's whole slice out.
func (r *reconciler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	var vm model.VirtualMachine
	if err := json.Unmarshal(o.Spec.Body, &vm); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	var prev model.VirtualMachineStatus
	if s, ok := o.Slices[model.ServicePlacement]; ok && len(s.Status) > 0 {
		if err := json.Unmarshal(s.Status, &prev); err != nil {
			return reconcile.Result{}, fmt.Errorf("%w: decode placement status of %s: %v", events.ErrPermanent, o.Ref, err)
		}
	}
	id := vmIdentity{namespace: o.Ref.Namespace, name: o.Ref.Name, uid: o.Meta.UID}
	conds := newConditions(prev.Conditions, o.Meta.Generation, r.now())
	// Placement reports pauses (reconcile.Config.ReportsPause): this runs only unpaused.
	conds.put(model.ConditionReconcileReady, metav1.ConditionTrue, "", "")
	if o.Deleting() {
		return r.remove(ctx, id, &vm, prev, conds)
	}
	return r.ensure(ctx, o, id, &vm, prev, conds)
}

// ensure makes the VM exist: resolve class and image, find the VM, or place and create it.
func (r *reconciler) ensure(ctx context.Context, o reconcile.Object, id vmIdentity, vm *model.VirtualMachine, prev model.VirtualMachineStatus, conds *conditions) (reconcile.Result, error) {
	st := &model.VirtualMachineStatus{Policies: prev.Policies} // stands until applyPolicies says
	done := func() (reconcile.Result, error) {
		st.Conditions = conds.list()
		return reconcile.Result{Status: st}, nil
	}
	cls, err := r.resolveClass(ctx, id.namespace, vm.Spec.ClassName, conds)
	if err != nil {
		return reconcile.Result{}, err
	}
	img, err := r.resolveImage(ctx, id.namespace, vm.Spec.Image, conds)
	if err != nil {
		return reconcile.Result{}, err
	}
	policy, err := r.resolveStoragePolicy(ctx, vm.Spec.StorageClass)
	if err != nil {
		return reconcile.Result{}, err
	}
	t, err := r.topology(ctx, false)
	if err != nil {
		return reconcile.Result{}, err
	}

	found, adopt, err := r.findVM(ctx, t, id, prev.UniqueID, vm.Spec.InstanceUUID, searchByName(prev.Conditions, false, r.now(), r.grace),
		func() (bool, error) { return img != nil && img.fromTemplateItem(), nil })
	if errors.Is(err, errForeignVM) {
		conds.fail(model.ConditionCreated, model.ReasonError, err.Error())
		return r.publishAndRetry(ctx, o, st, conds, err)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if found != nil {
		if adopt {
			if cls == nil {
				return done() // configured once the class is back
			}
			mhz, err := r.coreMHz(ctx, found)
			if err != nil {
				return reconcile.Result{}, err
			}
			if err := r.configure(ctx, found.ref, id, vm.Spec, cls, img, mhz); err != nil {
				return reconcile.Result{}, fmt.Errorf("configure VM %s found by name: %w", found.ref.Value, err)
			}
			ref := found.ref
			if found, err = r.observe(ctx, ref, false); err != nil {
				return reconcile.Result{}, err
			}
			if found == nil {
				return reconcile.Result{}, fmt.Errorf("VM %s of %s/%s vanished while it was configured", ref.Value, id.namespace, id.name)
			}
		}
		if err := r.finishClone(ctx, id, vm, cls, img, found, prev.Conditions); err != nil {
			return reconcile.Result{}, err
		}
		res, err := r.created(ctx, t, vm, found, policy, st, conds, done)
		if err == nil && !rulesKept(prev, st.UniqueID) {
			err = r.keepRules(ctx, t, id, vm, st)
		}
		if err == nil && vm.Labels[model.LabelZone] == "" && st.Zone != "" {
			// The label is set before the create; a record that lost it gets it back.
			err = r.setZoneLabel(ctx, o, st.Zone)
		}
		return res, err
	}

	if started, inFlight := creating(prev.Conditions, r.now(), r.grace); inFlight {
		// A create issued before a crash may still be running in vCenter: wait for its VM
		// instead of issuing a second one (the retry finds it by UUID or by name).
		return reconcile.Result{}, fmt.Errorf("create of %s/%s started at %s and its VM has not appeared yet",
			id.namespace, id.name, started.Format(time.RFC3339))
	}
	if cls == nil || img == nil || policy == nil {
		msg := "waiting for the VirtualMachineClass, the image and the StorageClass to be ready"
		conds.fail(model.ConditionPlacementReady, model.ReasonNotReady, msg)
		conds.fail(model.ConditionCreated, model.ReasonNotReady, msg)
		res, err := done()
		// A class comes as a message (a related object); an image's status and a storage
		// policy vCenter may gain do not, so only a missing class leaves the resync idle.
		res.Idle = cls == nil && img != nil && policy != nil
		return res, err
	}
	if msg := templateItemRefusal(img, vm); msg != "" {
		conds.fail(model.ConditionCreated, model.ReasonInvalid, msg)
		return done()
	}
	if name := resourcePolicyName(vm); name != "" {
		// As VM Operator, a VM whose VirtualMachineSetResourcePolicy cannot be fetched is not
		// created; vmop serves no such kind, so none can be.
		msg := fmt.Sprintf("VirtualMachineSetResourcePolicy %q not found: vmop serves no VirtualMachineSetResourcePolicy", name)
		conds.fail(model.ConditionResourcePolicyReady, model.ReasonNotFound, msg)
		conds.fail(model.ConditionCreated, model.ReasonNotReady, msg)
		res, err := done()
		res.Idle = true // nothing can change it: the name is immutable (IMM-4)
		return res, err
	}

	zoneName := o.Meta.Labels[model.LabelZone]
	candidates := t.names
	if zoneName != "" {
		if _, ok := t.zones[zoneName]; !ok {
			if t, err = r.topology(ctx, true); err != nil {
				return reconcile.Result{}, err
			}
		}
		if _, ok := t.zones[zoneName]; !ok {
			conds.fail(model.ConditionPlacementReady, model.ReasonNotReady,
				fmt.Sprintf("zone %q of label %s is not a zone in vCenter", zoneName, model.LabelZone))
			conds.fail(model.ConditionCreated, model.ReasonNotReady, "waiting for placement")
			return done()
		}
		candidates = []string{zoneName}
	}
	pre, err := r.readAhead(ctx, t, id, vm, *policy)
	if unplaced(conds, err) {
		return done()
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	var ch choice
	decided := false // else the reconcile ends with the conditions it set
	err = r.holdNamespace(ctx, id.namespace, func(ctx context.Context) error {
		var err error
		ch, decided, err = r.chooseAndRecord(ctx, o, t, id, vm, cls, img, candidates, pre, st, conds)
		return err
	})
	if err != nil {
		return reconcile.Result{}, err
	}
	if !decided {
		return done()
	}
	ref, err := r.create(ctx, t, id, vm.Spec, cls, img, ch, cloneHowOf(vm))
	if err != nil && vcenter.Unanswered(err) {
		// The create may go on in vCenter (the call or its wait failed on the way): Created
		// stays Creating, so that the retry, or a deletion, waits for its VM (createGrace)
		// instead of issuing another create, or leaving one behind.
		return reconcile.Result{}, err
	}
	if err != nil {
		conds.fail(model.ConditionCreated, model.ReasonError, err.Error())
		return r.publishAndRetry(ctx, o, st, conds, err)
	}
	v, err := r.observe(ctx, ref, false)
	if err != nil {
		return reconcile.Result{}, err
	}
	if v == nil {
		return reconcile.Result{}, fmt.Errorf("VM %s of %s/%s vanished right after its create", ref.Value, id.namespace, id.name)
	}
	res, err := r.created(ctx, t, vm, v, policy, st, conds, done)
	if err != nil {
		return res, err
	}
	return res, r.keepRules(ctx, t, id, vm, st)
}

// created reports an existing VM, and where it is: zone, host and the storage policy its
// home and image disks were created with (vcsim keeps no record of a VM's policy, and
// vCenter keeps it per disk).
func (r *reconciler) created(ctx context.Context, t *topology, vm *model.VirtualMachine, v *vmState, policy *storagePolicy,
	st *model.VirtualMachineStatus, conds *conditions, done func() (reconcile.Result, error)) (reconcile.Result, error) {
	if err := r.report(ctx, t, v, st); err != nil {
		return reconcile.Result{}, err
	}
	st.Class = appliedClass(vm)
	if err := r.applyPolicies(ctx, vm, v, st, conds); err != nil {
		return reconcile.Result{}, err
	}
	if label := vm.Labels[model.LabelZone]; label != "" && st.Zone != "" && label != st.Zone {
		conds.fail(model.ConditionPlacementReady, model.ReasonZoneMismatch,
			fmt.Sprintf("the VM runs in zone %s, label %s says %s", st.Zone, model.LabelZone, label))
	} else if policy != nil {
		conds.put(model.ConditionPlacementReady, metav1.ConditionTrue, model.ReasonTrue,
			fmt.Sprintf("zone %s, host %s, %s", st.Zone, st.NodeName, policy))
	} else {
		conds.ok(model.ConditionPlacementReady)
	}
	conds.ok(model.ConditionCreated)
	return done()
}

// appliedClass is the class last applied to the VM (api-rules §3): the one the
// last-resized-vm-class annotation names while a resize is pending (D14) or after one
// (power keeps it in line with the VM), else the spec's class, which the VM was created
// with.
func appliedClass(vm *model.VirtualMachine) *model.LocalObjectRef {
	name := vm.Spec.ClassName
	if last, ok := model.ParseAppliedClass(vm.Annotations[model.AnnotationLastResizedClass]); ok {
		name = last.Name
	}
	return &model.LocalObjectRef{APIVersion: model.GroupVMOperator + "/" + model.VersionVMOperator,
		Kind: "VirtualMachineClass", Name: name}
}

// publish makes st, with the conditions so far, placement's slice now, before the
// reconcile ends: for a record that must survive a crash in what follows.
func (r *reconciler) publish(ctx context.Context, o reconcile.Object, st *model.VirtualMachineStatus, conds *conditions) error {
	st.Conditions = conds.list()
	body, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("%w: encode status of %s: %v", events.ErrPermanent, o.Ref, err)
	}
	_, err = events.PublishStatus(ctx, r.js, o.Ref, events.Slice{
		Service: model.ServicePlacement, UID: o.Meta.UID, Generation: o.Meta.Generation, Status: body})
	if err != nil {
		return fmt.Errorf("publish status of %s: %w", o.Ref, err)
	}
	return nil
}

// publishAndRetry shows a failure in the slice and returns it, so the reconcile is retried
// with backoff instead of waiting for the next change.
func (r *reconciler) publishAndRetry(ctx context.Context, o reconcile.Object, st *model.VirtualMachineStatus, conds *conditions, cause error) (reconcile.Result, error) {
	if err := r.publish(ctx, o, st, conds); err != nil {
		return reconcile.Result{}, errors.Join(cause, err)
	}
	return reconcile.Result{}, cause
}

// resourcePolicyName is spec.reserved.resourcePolicyName, "" when unset.
func resourcePolicyName(vm *model.VirtualMachine) string {
	if vm.Spec.Reserved == nil {
		return ""
	}
	return vm.Spec.Reserved.ResourcePolicyName
}
