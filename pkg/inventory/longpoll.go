package inventory

import (
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// longPolls remembers the property collectors that have served a WaitForUpdates(Ex) so that Close
// can cancel them, and refuses new long polls once closing.
type longPolls struct {
	mu         sync.Mutex
	closing    bool
	collectors map[*simulator.PropertyCollector]int // long polls served so far
}

func newLongPolls() *longPolls {
	return &longPolls{collectors: make(map[*simulator.PropertyCollector]int)}
}

// observe is installed as the registry's method Handler: it sees every SOAP call before dispatch
// and returns no override, so calls proceed unchanged.
func (l *longPolls) observe(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
	switch m.Name {
	case "WaitForUpdatesEx", "WaitForUpdates", "DestroyPropertyCollector":
	default:
		return nil, nil
	}
	if ctx.Session == nil {
		return nil, nil
	}
	pc, ok := ctx.Session.Get(m.This).(*simulator.PropertyCollector)
	if !ok {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if m.Name == "DestroyPropertyCollector" {
		delete(l.collectors, pc)
		return nil, nil
	}
	if l.closing {
		return nil, new(types.RequestCanceled)
	}
	l.collectors[pc]++
	return nil, nil
}

// close refuses further long polls and cancels the current ones.
func (l *longPolls) close() {
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
	l.cancelAll()
}

func (l *longPolls) cancelAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for pc := range l.collectors {
		pc.CancelWaitForUpdates(&types.CancelWaitForUpdates{This: pc.Self})
	}
}

// served is the number of long polls seen so far.
func (l *longPolls) served() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, calls := range l.collectors {
		n += calls
	}
	return n
}
