package power

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
)

// watchedEvents are the vCenter events after which power looks at the VM again: its power
// state changed, maybe behind vmop's back. VmReconfiguredEvent (an out-of-band CPU or
// memory change) is left to the resync: the event carries the VM's config spec, and vcsim
// copies it for the watch under the collector's lock while the VM's next reconfigure
// writes the same memory under the VM's, a data race in any process embedding vcsim.
// VmRemovedEvent only makes the index forget the VM.
var watchedEvents = []string{"VmPoweredOnEvent", "DrsVmPoweredOnEvent", "VmPoweredOffEvent", "VmSuspendedEvent", "VmRemovedEvent"}

const (
	// readBatch is how many events one ReadNextEvents returns at most.
	readBatch = 100
	// longPollSeconds bounds each WaitForUpdatesEx, so vCenter never holds one forever.
	longPollSeconds = 60
	// cleanupTimeout bounds the calls that tear the watch down, after ctx has ended.
	cleanupTimeout = 5 * time.Second
	maxRetryDelay  = 30 * time.Second
)

// requester asks for reconciles (reconcile.Trigger).
type requester interface {
	Request(ctx context.Context, ref events.Ref)
	RequestAll(ctx context.Context) error
}

// watcher turns vCenter's VM events into reconciles. It follows one EventHistoryCollector
// (a single object: cheap for vCenter whatever the number of VMs, unlike a property
// collector over a view of every VM, notes/vcsim.md §3.3). A property-collector watch on
// the collector's latestPage rings when events arrive; the events themselves are read
// from the collector's scrollable view with ReadNextEvents, in order and without gaps,
// however many arrived between two rings.
type watcher struct {
	vc    *govmomi.Client
	index *vmIndex
	req   requester
	log   *slog.Logger
}

// run watches until ctx ends, starting over after a failure. Each start reconciles every
// VM, since changes may have happened while no watch was in place.
//
// The event collector is reused when the watch starts over, and destroyed when run ends:
// a real vCenter frees it with the session, but vcsim keeps every collector ever made, even
// after logout, and refuses a 33rd ("Too many event collectors to create"), so a service
// restarted often enough would no longer see any VM change behind vmop's back.
func (w *watcher) run(ctx context.Context) {
	var collector *event.HistoryCollector
	defer func() {
		if collector != nil {
			cleanup(collector.Destroy)
		}
	}()
	delay := time.Second
	for {
		var err error
		if collector == nil {
			collector, err = w.newCollector(ctx)
		}
		if err == nil {
			err = w.watch(ctx, collector)
		}
		if ctx.Err() != nil {
			return
		}
		if fault.Is(err, &types.ManagedObjectNotFound{}) && collector != nil {
			// e.g. the session was renewed, which took its collector: make a new one (and
			// destroy the old one in case what was not found was something else)
			cleanup(collector.Destroy)
			collector = nil
		}
		w.log.Warn("vCenter event watch failed; starting over", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, maxRetryDelay)
	}
}

// newCollector makes the event collector the watch follows, its scrollable view at the
// newest event: what happened before, the reconcile of every VM at the watch's start
// covers. The latestPage is only a doorbell, so it holds one event (MaxCount): vcsim
// copies a watched page again for every change anywhere in its inventory, ten events
// (vCenter's default page) for every task update of every VM.
func (w *watcher) newCollector(ctx context.Context) (*event.HistoryCollector, error) {
	collector, err := event.NewManager(w.vc.Client).CreateCollectorForEvents(ctx, types.EventFilterSpec{
		EventTypeId: watchedEvents, MaxCount: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("create event collector: %w", err)
	}
	if err := collector.Reset(ctx); err != nil {
		cleanup(collector.Destroy)
		return nil, fmt.Errorf("position event collector: %w", err)
	}
	return collector, nil
}

// watch reconciles every VM, then the VMs of each event the collector gathers, until ctx
// ends or vCenter fails. Its property collector is destroyed on the way out, after its
// long poll was cancelled: vCenter does not notice a client going away (notes P19).
func (w *watcher) watch(ctx context.Context, collector *event.HistoryCollector) error {
	pc, err := property.DefaultCollector(w.vc.Client).Create(ctx)
	if err != nil {
		return fmt.Errorf("create property collector: %w", err)
	}
	defer cleanup(pc.Destroy)
	filter := types.CreateFilter{Spec: types.PropertyFilterSpec{
		ObjectSet: []types.ObjectSpec{{Obj: collector.Reference()}},
		PropSet:   []types.PropertySpec{{Type: collector.Reference().Type, PathSet: []string{"latestPage"}}},
	}}
	if _, err := pc.CreateFilter(ctx, filter); err != nil {
		return fmt.Errorf("watch event collector: %w", err)
	}
	var cursor eventCursor
	first := true
	wait := int32(longPollSeconds)
	req := types.WaitForUpdatesEx{This: pc.Reference(), Options: &types.WaitOptions{MaxWaitSeconds: &wait}}
	for {
		res, err := methods.WaitForUpdatesEx(ctx, w.vc.Client, &req)
		if err != nil {
			if ctx.Err() != nil {
				cleanup(pc.CancelWaitForUpdates)
				return ctx.Err()
			}
			return fmt.Errorf("wait for events: %w", err)
		}
		if res.Returnval == nil {
			continue // the long poll expired
		}
		req.Version = res.Returnval.Version
		rung := newestKey(res.Returnval)
		if first {
			// The first update shows the page as the watch starts: what happened up to
			// it, the reconcile of every VM (which reads vCenter after it) covers.
			cursor.last, first = max(cursor.last, rung), false
			if err := w.req.RequestAll(ctx); err != nil {
				return err
			}
		}
		if err := w.drain(ctx, collector, &cursor, rung); err != nil {
			return err
		}
	}
}

// drain reads the events gathered since the last read and reconciles their VMs. rung is
// the newest event the latestPage showed: should the scrollable view not have given it
// (a vCenter that caps the view), every VM is reconciled rather than a change missed.
func (w *watcher) drain(ctx context.Context, collector *event.HistoryCollector, cursor *eventCursor, rung int32) error {
	for {
		batch, err := collector.ReadNextEvents(ctx, readBatch)
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		if err := w.handle(ctx, cursor.advance(batch)); err != nil {
			return err
		}
	}
	if rung > cursor.last {
		cursor.last = rung
		return w.req.RequestAll(ctx)
	}
	return nil
}

// handle reconciles the objects of the events.
func (w *watcher) handle(ctx context.Context, batch []types.BaseEvent) error {
	for _, e := range batch {
		vmArg := e.GetEvent().Vm
		if vmArg == nil {
			continue
		}
		if _, removed := e.(*types.VmRemovedEvent); removed {
			w.index.drop(vmArg.Vm.Value)
			continue
		}
		ref, ok, err := w.index.lookup(ctx, w.vc, vmArg.Vm.Value)
		if err != nil {
			// Not knowing which object the VM is, look at them all rather than miss it.
			w.log.Warn("map vCenter event to an object", "vm", vmArg.Vm.Value, "err", err)
			return w.req.RequestAll(ctx)
		}
		if ok {
			w.req.Request(ctx, ref)
		}
	}
	return nil
}

// newestKey is the largest event key in the latestPage changes of an update, 0 for none.
func newestKey(set *types.UpdateSet) int32 {
	var newest int32
	for _, fs := range set.FilterSet {
		for _, obj := range fs.ObjectSet {
			for _, change := range obj.ChangeSet {
				page, ok := change.Val.(types.ArrayOfEvent)
				if change.Name != "latestPage" || !ok {
					continue
				}
				for _, e := range page.Event {
					newest = max(newest, e.GetEvent().Key)
				}
			}
		}
	}
	return newest
}

// eventCursor remembers the newest event key handled. Event keys grow monotonically.
type eventCursor struct{ last int32 }

// advance returns the events newer than the cursor, in the order given, and moves the
// cursor past them: a reset collector may hand out its latest page again.
func (c *eventCursor) advance(batch []types.BaseEvent) []types.BaseEvent {
	var fresh []types.BaseEvent
	for _, e := range batch {
		if key := e.GetEvent().Key; key > c.last {
			fresh = append(fresh, e)
			c.last = key
		}
	}
	return fresh
}

// cleanup runs a teardown call with a fresh bounded context, since the watch's own has
// usually ended; failures only leak a collector on a vCenter that is going away.
func cleanup(f func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_ = f(ctx)
}
