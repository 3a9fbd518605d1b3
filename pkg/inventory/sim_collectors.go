package inventory

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// collectorReaper serves DestroyCollector for event history collectors under the
// EventManager's lock as well as the collector's. vcsim's own takes the collector's lock
// only, and removes the collector from the list that PostEvent walks under the
// EventManager's (govmomi v0.56.0 simulator/history_collector.go:108 vs
// event_manager.go:148): without this, destroying a collector while any event is posted
// is a data race in the process that embeds vcsim.
type collectorReaper struct {
	Self types.ManagedObjectReference
}

var collectorReaperRef = types.ManagedObjectReference{Type: "VmopCollectorReaper", Value: "vmop-collector-reaper"}

func (r *collectorReaper) Reference() types.ManagedObjectReference { return r.Self }

// serve makes the reaper the handler of an event collector's DestroyCollector. vcsim
// prefers the object m.This names in the caller's session to the handler returned, so
// m.This becomes the reaper's reference, which no registry holds (an object in the
// inventory must be a managed object type); the request body still names the collector.
func (r *collectorReaper) serve(m *simulator.Method) (mo.Reference, bool) {
	if m.Name != "DestroyCollector" || m.This.Type != "EventHistoryCollector" {
		return nil, false
	}
	m.This = r.Self
	return r, true
}

func (r *collectorReaper) DestroyCollector(ctx *simulator.Context, req *types.DestroyCollector) soap.HasFault {
	c, ok := ctx.Session.Get(req.This).(*simulator.EventHistoryCollector)
	if !ok {
		return &methods.DestroyCollectorBody{Fault_: simulator.Fault("", &types.ManagedObjectNotFound{Obj: req.This})}
	}
	var res soap.HasFault
	ctx.WithLock(ctx.Map.EventManager(), func() {
		ctx.WithLock(c, func() { res = c.DestroyCollector(ctx, req) })
	})
	return res
}
