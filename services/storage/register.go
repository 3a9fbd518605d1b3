package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/cns"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// registrar carries out a VM's schema upgrade (api-rules §0.4; seed, Schema Upgrades and
// Image Disk Conversion): the image disks are back-filled into spec.volumes, linked clones
// promoted, each disk registered in place as a claim through a CnsRegisterVolume, then the
// upgraded-to annotations are stamped. One append to SPECS records it all when the
// registration can finish at once; otherwise the back-fill is appended alone, which
// brings the VM back for the rest. Every object it makes has a name derived from the
// disk, and vCenter is asked what exists before anything is made, so a crash repeats
// nothing.
type registrar struct {
	js   jetstream.JetStream
	uses *vmClaims // the objects a VM owns
	vc   *govmomi.Client
	cns  *cns.Client
	// creates are the CNS creations whose outcome is not known yet, which a lookup by name
	// cannot see (volumes, shared with the claims' loop).
	creates creations
	now     func() time.Time
}

// creations are the CNS volume creations whose outcome is not known yet (volumes).
type creations interface {
	awaitCreatesOf(ctx context.Context, name string) error
	creating(name string, task *object.Task) (seen func(error))
}

// upgrade takes the VM one step further through its schema upgrade and sets the
// conditions that tell how far it is. Only what can be retried is an error.
func (r *registrar) upgrade(ctx context.Context, o reconcile.Object, vm *model.VirtualMachine, mvm mo.VirtualMachine, vcVM *object.VirtualMachine, conds *reconcile.ConditionSet) error {
	devices := object.VirtualDeviceList(mvm.Config.Hardware.Device)
	disks := imageDisks(devices)
	if model.Upgraded(vm, model.BuildVersion) {
		conds.Set(model.ConditionUnmanagedVolumesBackfilled, metav1.ConditionTrue, "", "")
		conds.Set(model.ConditionUnmanagedVolumesRegistered, metav1.ConditionTrue, "", "")
		promotionSynced(vm, disks, conds)
		return nil
	}
	var add []model.VirtualMachineVolume
	for _, d := range disks {
		if entryFor(vm.Spec.Volumes, d) < 0 {
			add = append(add, d.volume())
		}
	}
	hw := backfillControllers(vm.Spec.Hardware, devices)
	placed, err := r.placeAttached(ctx, vm, vm.Spec.Volumes, devices)
	if err != nil {
		return err
	}
	current := vm.Spec.Volumes
	if placed != nil {
		current = placed
	}
	hw = backfillCdroms(vm.Spec, hw, slices.Concat(current, add))
	var backfill *vmEdit
	if len(add) > 0 || hw != nil || placed != nil {
		e := vmEdit{hardware: hw, volumes: placed}
		if len(add) > 0 {
			if e.volumes == nil {
				e.volumes = slices.Clone(vm.Spec.Volumes)
			}
			e.volumes = append(e.volumes, add...)
		}
		backfill = &e
		vm = e.applied(vm)
	}
	// The registration goes on from the back-filled spec, and one write records both:
	// every write wakes every service. Until the registration can finish, the back-fill
	// is written alone.
	registered, err := r.register(ctx, vm, vcVM, disks, conds)
	switch {
	case err != nil && backfill == nil:
		return err
	case backfill != nil:
		// The conditions speak of this generation, whose spec lacks the back-fill: the
		// next one (the write's) tells how far the registration got.
		conds.Set(model.ConditionUnmanagedVolumesBackfilled, metav1.ConditionFalse, model.ReasonPending,
			fmt.Sprintf("adding %d image disks to spec.volumes, the VM's controllers to spec.hardware and attached volumes' and CD-ROMs' placement", len(add)))
		conds.Set(model.ConditionUnmanagedVolumesRegistered, metav1.ConditionFalse, model.ReasonPending, "waits for the image disks to be in spec.volumes")
		if registered == nil { // a failed step is tried again from the back-filled spec
			return writeVM(ctx, r.js, o, *backfill)
		}
		registered.hardware = backfill.hardware
		if registered.volumes == nil {
			registered.volumes = backfill.volumes
		}
		return writeVM(ctx, r.js, o, *registered)
	case registered != nil:
		return writeVM(ctx, r.js, o, *registered)
	}
	return nil
}

// register promotes the image disks and registers each as a claim, and returns the edit
// that records the claims in spec.volumes and stamps the upgrade; nil while it cannot
// finish, which conds tell.
func (r *registrar) register(ctx context.Context, vm *model.VirtualMachine, vcVM *object.VirtualMachine, disks []imageDisk, conds *reconcile.ConditionSet) (*vmEdit, error) {
	conds.Set(model.ConditionUnmanagedVolumesBackfilled, metav1.ConditionTrue, "", "")
	disks, waiting, err := r.promote(ctx, vm, vcVM, disks, conds)
	if err != nil || waiting != "" {
		conds.Set(model.ConditionUnmanagedVolumesRegistered, metav1.ConditionFalse, model.ReasonPending, waiting)
		return nil, err
	}
	class, err := r.policyOf(ctx, vm.Spec.StorageClass)
	if err != nil {
		return nil, err
	}
	if class.problem != "" {
		conds.Set(model.ConditionUnmanagedVolumesRegistered, metav1.ConditionFalse, model.ReasonPending, class.problem)
		return nil, nil
	}
	vols := slices.Clone(vm.Spec.Volumes)
	named := false
	for _, d := range disks {
		i := entryFor(vols, d)
		g := registration{vm: vm, disk: d, claim: claimName(vols[i]), class: vm.Spec.StorageClass}
		problem, err := r.registerDisk(ctx, g, class.policyID)
		if err != nil {
			return nil, err
		}
		if problem != "" {
			conds.Set(model.ConditionUnmanagedVolumesRegistered, metav1.ConditionFalse, reasonRegistrationFailed, problem)
			return nil, nil
		}
		if vols[i].PersistentVolumeClaim == nil {
			vols[i].PersistentVolumeClaim = &model.PersistentVolumeClaimVolumeSource{ClaimName: g.claim}
			named = true
		}
	}
	if !named {
		vols = nil // the volumes stay as they are: only the annotations change
	}
	conds.Set(model.ConditionUnmanagedVolumesRegistered, metav1.ConditionTrue, "", "")
	return &vmEdit{volumes: vols, annotations: model.UpgradedTo(model.BuildVersion)}, nil
}

// reasonRegistrationFailed is upstream's reason for a registration that cannot proceed.
const reasonRegistrationFailed = "ErrRegistration"

// registerDisk makes the disk a claim bound to a CNS volume backed by the disk's own file
// (seed, Registration Workflow): its CnsRegisterVolume first, then the CNS volume, then the
// claim, bound, and the CnsRegisterVolume reports done. It returns why it cannot when the
// names it needs are taken by objects that are not the VM's.
func (r *registrar) registerDisk(ctx context.Context, g registration, policyID string) (string, error) {
	claimRef := events.Ref{Plural: pluralClaims, Namespace: g.vm.Namespace, Name: g.claim}
	crvRef := events.Ref{Plural: pluralRegistered, Namespace: g.vm.Namespace, Name: g.claim}
	claim, err := readOwned(ctx, r.js, claimRef)
	if err != nil {
		return "", err
	}
	crv, err := readOwned(ctx, r.js, crvRef)
	if err != nil {
		return "", err
	}
	var user *model.PersistentVolumeClaim // a claim made beforehand, which the registration takes over
	if claim.live {
		c, problem := adoptable(claim, g)
		if registeredAs(c, g) {
			// Registered before; a crash may have come between the claim and the reports.
			return "", r.reportDone(ctx, g, crv)
		}
		if problem != "" {
			return problem, nil
		}
		if class := c.Spec.StorageClassName; class != nil && *class != "" && *class != g.class {
			// The claim's class, not the VM's, is the disk's policy (register_adopt.go).
			p, err := r.policyOf(ctx, *class)
			if err != nil || p.problem != "" {
				return p.problem, err
			}
			policyID = p.policyID
		}
		user = &c
	}
	if crv.live && !crv.ownedBy(string(g.vm.UID)) {
		return fmt.Sprintf("CnsRegisterVolume %s exists and is not the VM's", g.claim), nil
	}
	if g.location, err = r.locate(ctx, g.disk); err != nil {
		return "", err
	}
	if !crv.live {
		obj := g.registerVolume(r.now())
		if err := create(ctx, r.js, crv, obj); err != nil {
			return "", err
		}
		if err := reportStatus(ctx, r.js, crvRef, string(obj.UID), model.CnsRegisterVolumeStatus{}); err != nil {
			return "", err
		}
		if crv, err = readOwned(ctx, r.js, crvRef); err != nil {
			return "", err
		}
	}
	volumeID, err := r.ensureVolume(ctx, g.disk.name(), g.location, g.disk.device.CapacityInBytes>>20, policyID)
	if vcenter.IsFault(err) {
		msg := err.Error()
		return msg, reportStatus(ctx, r.js, crvRef, crv.header.Metadata.UID, model.CnsRegisterVolumeStatus{Error: msg})
	}
	if err != nil {
		return "", err
	}
	if user != nil {
		err = adopt(ctx, r.js, claim, *user, g, volumeID)
	} else {
		err = create(ctx, r.js, claim, g.persistentVolumeClaim(volumeID, r.now()))
	}
	if err != nil {
		return "", err
	}
	return "", r.reportDone(ctx, g, crv)
}

// reportDone reports the CnsRegisterVolume registered; the claim, created bound, is the
// claim loop's to report (Bound once it finds the volume).
func (r *registrar) reportDone(ctx context.Context, g registration, crv owned) error {
	if !crv.live || !crv.ownedBy(string(g.vm.UID)) {
		return nil
	}
	return reportStatus(ctx, r.js, crv.ref, crv.header.Metadata.UID, model.CnsRegisterVolumeStatus{Registered: true})
}

// vmClassPolicy is the storage policy of the VM's class, which the registered volumes get,
// or why there is none yet.
type vmClassPolicy struct{ policyID, problem string }

func (r *registrar) policyOf(ctx context.Context, name string) (vmClassPolicy, error) {
	rec, err := events.LastSpec(ctx, r.js, events.Ref{Plural: "storageclasses", Name: name})
	if errors.Is(err, events.ErrNotFound) || (err == nil && rec.Op == events.OpDelete) {
		return vmClassPolicy{problem: fmt.Sprintf("waits for storage class %q", name)}, nil
	}
	if err != nil {
		return vmClassPolicy{}, fmt.Errorf("read storage class %s: %w", name, err)
	}
	var sc model.StorageClass
	if err := json.Unmarshal(rec.Body, &sc); err != nil || sc.Parameters[model.StoragePolicyIDParameter] == "" {
		return vmClassPolicy{problem: fmt.Sprintf("storage class %q names no storage policy", name)}, nil
	}
	return vmClassPolicy{policyID: sc.Parameters[model.StoragePolicyIDParameter]}, nil
}
