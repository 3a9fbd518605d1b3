package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// Managed volumes (spec.volumes[].persistentVolumeClaim, CONTRACTS B). Each claim is
// bound to a CNS volume; attaching it records the attachment in CNS (vCenter's
// bookkeeping) and then adds a disk backed by the volume's file with a reconfigure, since
// CNS attach adds no device in vcsim. A disk vmop attached names its volume in vDiskId, so
// one whose volume no spec entry asks for any more is detached: the disk is removed and
// its file kept, then CNS records the detach (a refused removal leaves the attachment as
// it is, so no other VM can take a volume this one still has; a crash between the two
// leaves an attachment no VM holds, which attachAll takes as left over). Attach and detach
// each hold the volume's scope across their two steps. Every step looks
// at the VM first, so a reconcile repeated after a crash finds the disk attached and adds
// nothing twice.

// attacher attaches, grows and detaches the CNS volumes of VMs.
type attacher struct {
	vc  *govmomi.Client
	cns *cnsRegistry
	// js holds the scopes of the volumes being attached (reconcile.HoldScope), so that
	// two VMs reconciled at once, by this replica or another, cannot both find one free.
	js jetstream.JetStream
	// later asks for another reconcile of the VM at a time: a claim grown before its CNS
	// volume is, by the claim loop.
	later func(ref events.Ref, at time.Time)
	// polls is, by VM, how long the next look waits while it waits on a claim.
	polls sync.Map // events.Ref → time.Duration
}

// While a claim's expansion is pending, or a claim the VM names is not found, its VMs are
// looked at again after claimPoll, then twice as long each time up to claimPollMax: an
// expansion the class forbids, or that vCenter refuses, may stay pending for good, and a
// claim may be missing for good; but a claim just made may not be seen yet (a read served
// by a replica of the stream that lags), and nothing else would bring the VM back.
const (
	claimPoll    = time.Second
	claimPollMax = time.Minute
)

// pollClaims asks for the VM's next look while it waits on a claim (pending), and forgets
// its waits once it does not.
func (a *attacher) pollClaims(ref events.Ref, pending bool) {
	if !pending || a.later == nil {
		a.polls.Delete(ref)
		return
	}
	wait := claimPoll
	if last, ok := a.polls.Load(ref); ok {
		wait = min(2*last.(time.Duration), claimPollMax)
	}
	a.polls.Store(ref, wait)
	a.later(ref, time.Now().Add(wait))
}

// scopeVolumes is the kind of scope (reconcile.HoldScope) a CNS volume's attachment holds.
const scopeVolumes = "volumes"

// holdVolumes runs f holding the scopes of the volumes ids, taken in their order.
func (a *attacher) holdVolumes(ctx context.Context, ids []string, f func(ctx context.Context) error) error {
	if len(ids) == 0 {
		return f(ctx)
	}
	return reconcile.HoldScope(ctx, a.js, model.ServiceStorage, scopeVolumes, ids[0], func(ctx context.Context) error {
		return a.holdVolumes(ctx, ids[1:], f)
	})
}

// wantVolume is one spec.volumes entry with a claim, resolved as far as it goes.
type wantVolume struct {
	spec    model.VirtualMachineVolume
	claim   claim
	cns     cnsVolume
	problem string // why it cannot be attached; "" when it can
	missing bool   // its claim is not found
	// classic: the last report called the entry's disk Classic, which it stays while the
	// claim that would say so cannot be read.
	classic bool
}

// volumeReport is the outcome: the entries of status.volumes for spec.volumes, the disks
// they stand for (not reported again among the image's unregistered disks), and what is
// wrong.
type volumeReport struct {
	volumes  []model.VirtualMachineVolumeStatus
	managed  map[int32]bool // device keys of the managed volumes' disks
	problems []string
	detached bool         // disks were removed
	record   volumeRecord // for the next pass
}

// sync brings the VM's managed volumes in line with spec.volumes and reports them; prev
// is the record of the last report (volumeRecord), whose entries' disks stay attached
// while their claims cannot be read. It returns the VM as it is afterwards.
func (a *attacher) sync(ctx context.Context, ref events.Ref, vm model.VirtualMachine, prev volumeRecord,
	readClaim func(ctx context.Context, namespace, name string) (claim, error), vcVM *object.VirtualMachine, mvm mo.VirtualMachine) (volumeReport, mo.VirtualMachine, error) {
	devices := object.VirtualDeviceList(mvm.Config.Hardware.Device)
	want, err := a.resolve(ctx, ref, vm, readClaim, devices)
	if err != nil {
		return volumeReport{}, mvm, err
	}
	for i := range want {
		want[i].classic = want[i].problem != "" && prev.classic(want[i].spec.Name)
	}
	// The volumes to attach stay held until their disks are added, and those to detach
	// until CNS records them detached, so that no other VM attaches a volume between its
	// two steps (in ID order, so two VMs never wait for each other).
	reported := prev.reported()
	d := planDetach(devices, want, heldDisks(vm.Spec.Volumes, prev.Disks), reported, mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn)
	held := slices.Clone(d.ids)
	for _, w := range want {
		if w.problem == "" && volumeDisk(devices, w.cns) == nil {
			held = append(held, w.cns.id)
		}
	}
	slices.Sort(held)
	var rep volumeReport
	err = a.holdVolumes(ctx, slices.Compact(held), func(ctx context.Context) error {
		var err error
		rep, mvm, err = a.apply(ctx, ref, want, d, vcVM, mvm)
		return err
	})
	if err == nil {
		rep.record = nextRecord(reported, rep.volumes, object.VirtualDeviceList(mvm.Config.Hardware.Device))
	}
	if err == nil && (rep.detached || releasesHeld(d.held, vm.Spec.Volumes, rep.volumes)) && a.later != nil {
		// What this pass freed (a removed disk's unit; a held disk, which the next pass
		// detaches) may be what another entry waits for, as when one volume replaces
		// another at its unit: the next pass comes at once, not with the resync.
		a.later(ref, time.Now())
	}
	return rep, mvm, err
}

// releasesHeld reports whether the report gives up a disk the previous one held for an
// entry (heldDisks): the entry now names another claim.
func releasesHeld(held map[string]string, spec []model.VirtualMachineVolume, rep []model.VirtualMachineVolumeStatus) bool {
	now := heldDisks(spec, specDisks(rep))
	for disk := range held {
		if _, ok := now[disk]; !ok {
			return true
		}
	}
	return false
}

// apply attaches, grows and detaches (as d says) the VM's managed volumes as want says,
// holding the scopes of the volumes it attaches and detaches, and reports them.
func (a *attacher) apply(ctx context.Context, ref events.Ref, want []wantVolume, d detach,
	vcVM *object.VirtualMachine, mvm mo.VirtualMachine) (volumeReport, mo.VirtualMachine, error) {
	devices := object.VirtualDeviceList(mvm.Config.Hardware.Device)
	on := mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn

	var changes []types.BaseVirtualDeviceConfigSpec
	var pending []placedVolume // the volumes to attach, each at its slot
	s := newSlots(devices)
	expanding := false // a claim asks for more than its volume has yet
	for i := range want {
		w := &want[i]
		if w.problem != "" {
			continue
		}
		if disk := volumeDisk(devices, w.cns); disk != nil {
			if disk.CapacityInBytes < w.cns.capacity {
				changes = append(changes, growDisk(disk, w.cns.capacity))
			}
			expanding = expanding || w.claim.requested > w.cns.capacity // the claim loop extends it; grow the disk then
			continue
		}
		if p, ok := place(w, s, on); ok {
			pending = append(pending, p)
		}
	}
	a.pollClaims(ref, expanding || slices.ContainsFunc(want, func(w wantVolume) bool { return w.missing }))
	adds, attached, err := a.attachAll(ctx, vcVM, pending, s)
	if err != nil {
		return volumeReport{}, mvm, err
	}
	changes = append(changes, adds...)
	changes = append(changes, d.removes...)

	var reconfigureErr error
	if len(changes) > 0 {
		changes = append(s.adds, changes...)
		reconfigureErr = reconfigure(ctx, vcVM, changes)
		if reconfigureErr != nil && !vcenter.IsFault(reconfigureErr) {
			return volumeReport{}, mvm, reconfigureErr
		}
		// vCenter refused: the attachments recorded for the disks it did not add go; else
		// those of the disks it removed do.
		gone := d.ids
		if reconfigureErr != nil {
			gone = attached
		}
		if err := a.cns.detachAll(ctx, gone, vcVM.Reference()); err != nil {
			return volumeReport{}, mvm, err
		}
		if mvm, _, err = readVM(ctx, a.vc, vcVM.Reference().Value, ""); err != nil {
			return volumeReport{}, mvm, err
		}
	}
	rep := report(want, object.VirtualDeviceList(mvm.Config.Hardware.Device), mvm.LayoutEx, d.held, reconfigureErr)
	rep.detached = len(d.removes) > 0 && reconfigureErr == nil
	if len(d.removes) > 0 && reconfigureErr != nil {
		// No entry reports these disks any more: the condition says they are still there.
		rep.problems = append(rep.problems, fmt.Sprintf("removing %d disks of volumes no longer in spec.volumes failed: %v", len(d.removes), reconfigureErr))
	}
	if on {
		for id, disk := range cnsDisks(object.VirtualDeviceList(mvm.Config.Hardware.Device)) {
			if _, ok := d.held[vcenter.BackingOf(disk).UUID]; !ok && !d.keep[id] && isIDE(devices, disk) {
				rep.problems = append(rep.problems, fmt.Sprintf("volume %s is on an IDE controller, which cannot remove a disk while the VM is powered on", id))
			}
		}
	}
	return rep, mvm, nil
}

// detach is what a reconcile detaches: the removals of the disks vmop attached whose
// volume no entry names any more (keep), unless the last report gave the disk to an entry
// still there whose claim cannot be read now (held), and their volume IDs. IDE disks of a
// running VM stay (no hot-remove).
type detach struct {
	keep    map[string]bool   // volume IDs the spec still asks for
	held    map[string]string // heldDisks
	removes []types.BaseVirtualDeviceConfigSpec
	ids     []string // of the removed disks that CNS records attached
}

// planDetach finds what detach describes. A disk without a vDiskId that the last report
// gave to an entry no longer in the spec (reported, not held) goes too: an image disk
// registered in place, which vcsim gives no vDiskId (the attached first-class disk has one
// in vCenter) and CNS records no attachment of, so it has no CNS detach.
func planDetach(devices object.VirtualDeviceList, want []wantVolume, held, reported map[string]string, on bool) detach {
	d := detach{keep: map[string]bool{}, held: held}
	wanted := map[*types.VirtualDisk]bool{}
	for _, w := range want {
		if w.cns.id != "" {
			d.keep[w.cns.id] = true
			wanted[volumeDisk(devices, w.cns)] = true
		}
	}
	kept := func(disk *types.VirtualDisk) bool {
		_, ok := held[vcenter.BackingOf(disk).UUID]
		return ok || wanted[disk] || (on && isIDE(devices, disk))
	}
	for id, disk := range cnsDisks(devices) {
		if d.keep[id] || kept(disk) {
			continue
		}
		d.ids = append(d.ids, id)
		d.removes = append(d.removes, removeDisk(disk))
	}
	for _, dev := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		disk := dev.(*types.VirtualDisk)
		if _, ok := reported[vcenter.BackingOf(disk).UUID]; ok && (disk.VDiskId == nil || disk.VDiskId.Id == "") && !kept(disk) {
			d.removes = append(d.removes, removeDisk(disk))
		}
	}
	return d
}

// resolve reads each volume's claim and its CNS volume. CNS is asked only about volumes
// vmop has not attached already at the claim's size, so that reconciling a VM whose
// volumes are in place costs vCenter nothing more.
func (a *attacher) resolve(ctx context.Context, ref events.Ref, vm model.VirtualMachine,
	readClaim func(ctx context.Context, namespace, name string) (claim, error), devices object.VirtualDeviceList) ([]wantVolume, error) {
	var want []wantVolume
	var ids []string
	attached := cnsDisks(devices)
	claims, errs := readClaims(ctx, ref.Namespace, vm.Spec.Volumes, readClaim)
	for i, v := range vm.Spec.Volumes {
		if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName == "" {
			if slot, ok := imageDiskSlot(devices, v); !ok {
				// The seed's Mapping spec.volumes to Image Disks: placement that matches no
				// disk of the image asks for a new volume, which needs a claim.
				want = append(want, wantVolume{spec: v, problem: fmt.Sprintf(
					"no disk of the image is at %s, and a new volume needs a persistentVolumeClaim", slot)})
			}
			continue
		}
		w := wantVolume{spec: v}
		name := v.PersistentVolumeClaim.ClaimName
		c, err := claims[i], errs[i]
		switch {
		case errors.Is(err, errNoClaim):
			w.problem, w.missing = fmt.Sprintf("PersistentVolumeClaim %q not found", name), true
		case err != nil:
			return nil, err
		case c.owner.UID != "" && c.owner.UID != vm.UID:
			// An image disk or instance storage of another VM: attaching it here would give
			// one disk to two VMs, which CNS has no attachment to refuse.
			w.problem = fmt.Sprintf("PersistentVolumeClaim %q belongs to VirtualMachine %s", name, c.owner.Name)
		case c.volumeID == "":
			w.problem = fmt.Sprintf("PersistentVolumeClaim %q is not bound to a volume yet", name)
		case c.deleting && attached[c.volumeID] == nil:
			// As Kubernetes: a claim being deleted gains no user, or its volume could go
			// while it is attached.
			w.problem = fmt.Sprintf("PersistentVolumeClaim %q is being deleted", name)
		default:
			w.claim = c
			if d := attached[c.volumeID]; d != nil && d.CapacityInBytes >= c.requested {
				w.cns = cnsVolume{id: c.volumeID, diskPath: vcenter.BackingOf(d).FileName, capacity: d.CapacityInBytes}
			} else {
				ids = append(ids, c.volumeID)
			}
		}
		want = append(want, w)
	}
	found, err := a.cns.volumes(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range want {
		w := &want[i]
		if w.problem != "" || w.cns.id != "" {
			continue
		}
		v, ok := found[w.claim.volumeID]
		switch {
		case !ok:
			w.problem = fmt.Sprintf("the CNS volume %s of PersistentVolumeClaim %q does not exist", w.claim.volumeID, w.claim.name)
		case v.diskPath == "":
			w.problem = fmt.Sprintf("the CNS volume %s of PersistentVolumeClaim %q has no disk file", w.claim.volumeID, w.claim.name)
		default:
			w.cns = v
		}
	}
	return want, nil
}

// readClaims reads the claims the volumes name, all at once (each is a read of SPECS),
// into the volumes' positions.
func readClaims(ctx context.Context, namespace string, volumes []model.VirtualMachineVolume,
	readClaim func(ctx context.Context, namespace, name string) (claim, error)) ([]claim, []error) {
	claims, errs := make([]claim, len(volumes)), make([]error, len(volumes))
	var wg sync.WaitGroup
	for i, v := range volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "" {
			wg.Go(func() { claims[i], errs[i] = readClaim(ctx, namespace, v.PersistentVolumeClaim.ClaimName) })
		}
	}
	wg.Wait()
	return claims, errs
}

// placedVolume is a volume to attach and the slot its disk goes to.
type placedVolume struct {
	w             *wantVolume
	ctrlKey, unit int32
}

// place finds the volume's slot; false with w.problem set when it cannot be attached.
func place(w *wantVolume, s *slots, on bool) (placedVolume, bool) {
	ctrlKey, unit, err := s.place(w.spec)
	switch {
	case err != nil:
		w.problem = err.Error()
	case on && ctrlKey < 0 && w.spec.ApplicationType == model.VolumeApplicationTypeMicrosoftWSFC:
		w.problem = "a SCSI controller with physical bus sharing cannot be added while the VM is powered on"
	case on && s.isIDE(ctrlKey):
		w.problem = "an IDE controller cannot take a disk while the VM is powered on"
	default:
		return placedVolume{w: w, ctrlKey: ctrlKey, unit: unit}, true
	}
	return placedVolume{}, false
}

// attachAll records the attachments in CNS, all in one call, and returns the disks to add
// and the volumes they stand for; a volume that cannot be attached gets w.problem. CNS
// refuses a second attachment of a volume: when another VM has its disk, the claim is
// taken (unless both share it multi-writer); when none has, the attachment is left over
// from a reconcile cut short before its reconfigure (this VM's, or a deleted VM's) and the
// disk is added now. The caller holds the volumes' scopes, so no other VM is between the
// two steps.
func (a *attacher) attachAll(ctx context.Context, vcVM *object.VirtualMachine, pending []placedVolume, s *slots) ([]types.BaseVirtualDeviceConfigSpec, []string, error) {
	ids := make([]string, len(pending))
	for i, p := range pending {
		ids[i] = p.w.cns.id
	}
	results, err := a.cns.attachAll(ctx, ids, vcVM.Reference())
	if err != nil {
		return nil, nil, err
	}
	var adds []types.BaseVirtualDeviceConfigSpec
	var attached []string
	for i, p := range pending {
		w := p.w
		if errors.Is(results[i], errInUse) && !(volumeSharing(w.spec) == model.VolumeSharingModeMultiWriter && w.claim.shared) {
			holder, err := a.holder(ctx, w.cns, vcVM.Reference())
			if err != nil {
				return nil, nil, err
			}
			if holder != "" {
				w.problem = fmt.Sprintf("PersistentVolumeClaim %q is ReadWriteOnce and attached to VM %s", w.claim.name, holder)
				continue
			}
		} else if results[i] != nil && !errors.Is(results[i], errInUse) {
			return nil, nil, results[i]
		}
		adds = append(adds, addDisk(w.cns, w.spec, s.newKey, p.ctrlKey, p.unit))
		s.newKey--
		attached = append(attached, w.cns.id)
	}
	return adds, attached, nil
}

// holder names another VM that has a disk backed by the volume, "" when none does.
func (a *attacher) holder(ctx context.Context, v cnsVolume, self types.ManagedObjectReference) (string, error) {
	var vms []mo.VirtualMachine
	m := view.NewManager(a.vc.Client)
	cv, err := m.CreateContainerView(ctx, a.vc.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		return "", fmt.Errorf("find the VM holding volume %s: %w", v.id, err)
	}
	defer cv.Destroy(context.WithoutCancel(ctx)) //nolint:errcheck // the view goes with the session anyway
	if err := cv.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config.hardware.device"}, &vms); err != nil {
		return "", fmt.Errorf("find the VM holding volume %s: %w", v.id, err)
	}
	for _, vm := range vms {
		if vm.Self == self || vm.Config == nil {
			continue
		}
		if volumeDisk(vm.Config.Hardware.Device, v) != nil {
			return vm.Name, nil
		}
	}
	return "", nil
}

// heldDisks are the disks the last report gave to entries (volumeRecord.Disks) that are
// still in the spec: disk UUID → entry name.
func heldDisks(spec []model.VirtualMachineVolume, reported map[string]string) map[string]string {
	out := maps.Clone(reported)
	maps.DeleteFunc(out, func(_, name string) bool {
		return !slices.ContainsFunc(spec, func(v model.VirtualMachineVolume) bool { return v.Name == name })
	})
	return out
}

func (s *slots) isIDE(ctrlKey int32) bool {
	for _, c := range s.ctrls {
		if c.key == ctrlKey {
			return c.typ == model.ControllerTypeIDE
		}
	}
	return false
}

func isIDE(devices object.VirtualDeviceList, disk *types.VirtualDisk) bool {
	_, ok := devices.FindByKey(disk.ControllerKey).(*types.VirtualIDEController)
	return ok
}

// reconfigure applies the device changes in one reconfigure and waits for it.
func reconfigure(ctx context.Context, vm *object.VirtualMachine, changes []types.BaseVirtualDeviceConfigSpec) error {
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{DeviceChange: changes})
	if err != nil {
		return fmt.Errorf("reconfigure VM %s: %w", vm.Reference().Value, err)
	}
	if _, err := vcenter.WaitTask(ctx, task); err != nil {
		return fmt.Errorf("reconfigure VM %s: %w", vm.Reference().Value, err)
	}
	return nil
}
