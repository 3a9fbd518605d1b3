package network

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
)

// DefaultGuestPoll is how often the service re-reads the guests of its VMs.
const DefaultGuestPoll = 10 * time.Second

// guestWatch notices guest changes: vCenter announces none (an address, VMware Tools
// starting, the heartbeat) in the event stream, and a property-collector watch over
// every VM costs vCenter (and vcsim far more, notes/vcsim.md §3.3) a re-read of all of
// them on every change anywhere. So every interval it reads the guest properties of all
// the VMs the service manages in one call, and asks for a reconcile of each VM whose
// guest differs from what its last reconcile read; or its power state, for a VM with a
// readiness probe (Ready follows it).
type guestWatch struct {
	vc      *govmomi.Client
	every   time.Duration
	request func(context.Context, events.Ref)
	log     *slog.Logger

	mu  sync.Mutex
	vms map[events.Ref]watched
}

// watchedProperties are the guest properties polled: all but guest.ipStack, whose routes
// change all the time on some guests (container hosts, VM Operator leaves it out of its
// watch for that reason) and would reconcile them on every poll. A reconcile that runs for
// another reason (an address, the probe period, the resync) reports it.
var watchedProperties = slices.DeleteFunc(slices.Clone(guestProperties), func(p string) bool { return p == "guest.ipStack" })

// watched is a VM the service manages and the fingerprint of its guest as last read.
type watched struct {
	moref  string
	probed bool // its power state counts
	seen   [sha256.Size]byte
}

func newGuestWatch(vc *govmomi.Client, every time.Duration, request func(context.Context, events.Ref), log *slog.Logger) *guestWatch {
	return &guestWatch{vc: vc, every: every, request: request, log: log, vms: map[events.Ref]watched{}}
}

// observed records what a reconcile read of the VM's guest; probed: the VM has a
// readiness probe.
func (w *guestWatch) observed(ref events.Ref, moref string, mvm mo.VirtualMachine, probed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.vms[ref] = watched{moref: moref, probed: probed, seen: guestFingerprint(mvm, probed)}
}

// forget stops watching the VM (deleted, or not in vCenter).
func (w *guestWatch) forget(ref events.Ref) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.vms, ref)
}

// run polls until ctx ends; a failed poll is logged and tried again next time.
func (w *guestWatch) run(ctx context.Context) {
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := w.poll(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("reading the guests failed", "err", err)
		}
	}
}

// poll reads the guests once and requests the reconciles of those that changed.
func (w *guestWatch) poll(ctx context.Context) error {
	w.mu.Lock()
	objs := make([]types.ObjectSpec, 0, len(w.vms))
	asked := make(map[string]bool, len(w.vms))
	for _, v := range w.vms {
		objs = append(objs, types.ObjectSpec{Obj: types.ManagedObjectReference{Type: "VirtualMachine", Value: v.moref}})
		asked[v.moref] = true
	}
	w.mu.Unlock()
	if len(objs) == 0 {
		return nil
	}
	res, err := property.DefaultCollector(w.vc.Client).RetrieveProperties(ctx, types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
		ObjectSet: objs,
		PropSet:   []types.PropertySpec{{Type: "VirtualMachine", PathSet: watchedProperties}},
		// A VM destroyed since is left out instead of failing the whole read.
		ReportMissingObjectsInResults: types.NewBool(true),
	}}})
	if err != nil {
		return err
	}
	// A VM vCenter no longer has is reported with the fault ManagedObjectNotFound (vcsim
	// leaves it out of the answer).
	exists := map[string]bool{}
	found := slices.DeleteFunc(res.Returnval, func(c types.ObjectContent) bool {
		exists[c.Obj.Value] = !isGone(c.MissingSet)
		return len(c.MissingSet) > 0
	})
	var vms []mo.VirtualMachine
	if err := mo.LoadObjectContent(found, &vms); err != nil {
		return err
	}
	now := map[string]mo.VirtualMachine{}
	for _, vm := range vms {
		now[vm.Self.Value] = vm
	}
	var changed []events.Ref
	w.mu.Lock()
	for ref, v := range w.vms {
		if asked[v.moref] && !exists[v.moref] {
			// Destroyed: its object was deleted, maybe through another replica, which
			// forgot it there; a VM created again for the object is observed anew.
			delete(w.vms, ref)
		} else if vm, ok := now[v.moref]; ok && guestFingerprint(vm, v.probed) != v.seen {
			changed = append(changed, ref)
		}
	}
	w.mu.Unlock()
	for _, ref := range changed {
		w.request(ctx, ref)
	}
	return nil
}

// guestFingerprint sums the watched properties (watchedProperties) of a VM as read, its
// power state only when withPower.
func guestFingerprint(vm mo.VirtualMachine, withPower bool) [sha256.Size]byte {
	var guest types.GuestInfo
	if !withPower {
		vm.Runtime.PowerState = ""
	}
	if vm.Guest != nil {
		guest = *vm.Guest
		guest.IpStack = nil
	}
	b, _ := json.Marshal(struct { // plain vSphere data types: marshalling cannot fail
		Power     types.VirtualMachinePowerState
		Heartbeat types.ManagedEntityStatus
		Guest     types.GuestInfo
	}{vm.Runtime.PowerState, vm.GuestHeartbeatStatus, guest})
	return sha256.Sum256(b)
}

// isGone: the missing properties say the object itself no longer exists.
func isGone(missing []types.MissingProperty) bool {
	for _, m := range missing {
		if _, ok := m.Fault.Fault.(*types.ManagedObjectNotFound); ok {
			return true
		}
	}
	return false
}
