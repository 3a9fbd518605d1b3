package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// handler reconciles one VirtualMachine at a time (the loop serialises per object).
type handler struct {
	js       jetstream.JetStream
	vc       *govmomi.Client
	volumes  *attacher
	register *registrar
	isos     *isoFinder
	now      func() time.Time
}

// reconcile reports the storage class check before the VM exists; once placement has
// created it, it brings the controllers in line with spec.hardware and reports what the VM has.
func (h *handler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	prev := o.Slices[model.ServiceStorage]
	var vm model.VirtualMachine
	if err := json.Unmarshal(o.Spec.Body, &vm); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	if o.Deleting() {
		// Placement destroys the VM and its disks; the claims registered for them go with
		// the VM. The last report stays until the object goes.
		if err := h.register.release(ctx, &vm); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.ReleasedKeeping(prev), nil
	}
	prevConds, err := reconcile.SliceConditions(prev)
	if err != nil {
		prevConds = nil // a slice we cannot read only costs transition times
	}
	conds := reconcile.NewConditionSet(prevConds, o.Meta.Generation, h.now())
	status := model.VirtualMachineStatus{}

	class, err := h.storageClass(ctx, vm.Spec.StorageClass)
	if err != nil {
		return reconcile.Result{}, err
	}
	placed, created := reconcile.Placed(o)
	if !created {
		if problem, ok := placementStorageProblem(o); ok && class.reason == "" {
			class = problem
		}
		class.ready(conds, "", "", "waiting for the VM to be created")
		status.Conditions = conds.List()
		// Placement's slice announces the VM, and storage classes are related objects. The
		// record stands: no disk was looked at.
		return reconcile.Result{Status: status, Record: prev.Record, Idle: true}, nil
	}

	mvm, vcVM, err := readVM(ctx, h.vc, placed, vm.Spec.InstanceUUID)
	if errors.Is(err, vcenter.ErrNotFound) {
		// Placement's report is ahead of what we see, or the VM went away: its next slice
		// (or the resync) brings us back.
		class.ready(conds, "", "", fmt.Sprintf("no VM with instance UUID %q in vCenter", vm.Spec.InstanceUUID))
		status.Conditions = conds.List()
		return reconcile.Result{Status: status, Record: prev.Record}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}

	problem, mvm, err := h.syncControllers(ctx, &vm, vcVM, mvm)
	if err != nil {
		return reconcile.Result{}, err
	}
	if problem == "" {
		if still := missingControllers(vm.Spec.Hardware, mvm.Config.Hardware.Device); len(still) > 0 {
			problem = fmt.Sprintf("the VM lacks controllers %s", describe(still))
		}
	}

	// The boot disk comes before the upgrade, which back-fills it like an image's disk:
	// an upgraded VM never gets one, so the upgrade waits while it is missing.
	mvm, bootDiskMissing, err := h.syncAdvanced(ctx, &vm, vcVM, mvm, conds)
	if err != nil {
		return reconcile.Result{}, err
	}
	if bootDiskMissing {
		conds.Set(model.ConditionUnmanagedVolumesRegistered, metav1.ConditionFalse, model.ReasonPending, "waits for the ISO VM's boot disk")
	} else if err := h.register.upgrade(ctx, o, &vm, mvm, vcVM, conds); err != nil {
		return reconcile.Result{}, err
	}
	if err := h.ensureInstanceClaims(ctx, &vm); err != nil {
		return reconcile.Result{}, err
	}
	mvm, cdroms, err := h.syncCdroms(ctx, &vm, vcVM, mvm, conds)
	if err != nil {
		return reconcile.Result{}, err
	}
	vols, mvm, err := h.syncVolumes(ctx, o, vm, vcVM, mvm)
	if err != nil {
		return reconcile.Result{}, err
	}
	claimed, err := h.registeredClassic(ctx, &vm, mvm, vols.managed)
	if err != nil {
		return reconcile.Result{}, err
	}
	for disk := range vols.record.Leaving {
		claimed[disk] = true // a removed entry's disk still attached: its claim charges it
	}
	observed := observe(mvm, vols.volumes, vols.managed, claimed)
	status.Volumes = observed.volumes
	nameCdroms(observed.controllers, vm.Spec.Hardware)
	status.Hardware = &model.VirtualMachineHardwareStatus{Controllers: observed.controllers}
	status.ChangeBlockTracking = mvm.Config.ChangeTrackingEnabled
	status.Storage = observed.storage
	class.ready(conds, problem, cdroms, "")
	vols.condition(conds)
	status.Conditions = conds.List()
	return reconcile.Result{Status: status, Record: vols.record}, nil
}

// classCheck is the outcome of resolving spec.storageClass: a reason and message when it
// failed.
type classCheck struct{ reason, message string }

// ready sets VirtualMachineStorageReady: True when the storage class resolved and
// nothing is pending or missing, which power waits for before a power-on. A class problem
// comes first; controllers is what is wrong with the controllers, cdroms what keeps the
// CD-ROMs from being as the spec says, pending what the service still waits for.
func (c classCheck) ready(conds *reconcile.ConditionSet, controllers, cdroms, pending string) {
	switch {
	case c.reason != "":
		conds.Set(model.ConditionStorageReady, metav1.ConditionFalse, c.reason, joinMessages(c.message, controllers, cdroms))
	case controllers != "":
		conds.Set(model.ConditionStorageReady, metav1.ConditionFalse, model.ReasonHardwareControllersMismatch, joinMessages(controllers, cdroms))
	case cdroms != "":
		conds.Set(model.ConditionStorageReady, metav1.ConditionFalse, model.ReasonHardwareCDROMMismatch, cdroms)
	case pending != "":
		conds.Set(model.ConditionStorageReady, metav1.ConditionFalse, model.ReasonNotReady, pending)
	default:
		conds.Set(model.ConditionStorageReady, metav1.ConditionTrue, "", "")
	}
}

// storageClass resolves the VM's StorageClass from SPECS: it must exist and name its
// vSphere storage policy. Only a failure to read is an error.
func (h *handler) storageClass(ctx context.Context, name string) (classCheck, error) {
	if name == "" {
		return classCheck{model.ReasonStorageClassRequired, "spec.storageClass is empty: a VM needs a storage class"}, nil
	}
	rec, err := events.LastSpec(ctx, h.js, events.Ref{Plural: "storageclasses", Name: name})
	if errors.Is(err, events.ErrNotFound) || (err == nil && rec.Op == events.OpDelete) {
		return classCheck{model.ReasonNotFound, fmt.Sprintf("storage class %q not found", name)}, nil
	}
	if err != nil {
		return classCheck{}, fmt.Errorf("read storage class %s: %w", name, err)
	}
	var sc model.StorageClass
	if err := json.Unmarshal(rec.Body, &sc); err != nil {
		return classCheck{model.ReasonInvalid, fmt.Sprintf("storage class %q cannot be read: %v", name, err)}, nil
	}
	if sc.Parameters[model.StoragePolicyIDParameter] == "" {
		return classCheck{model.ReasonInvalid, fmt.Sprintf("storage class %q has no parameters.%s", name, model.StoragePolicyIDParameter)}, nil
	}
	return classCheck{}, nil
}

func joinMessages(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}
