package quota

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmop/vmop/pkg/model"
)

// Gate serializes the writes that charge a namespace's storage quotas, from admission until
// the read model has folded them, so that each write's quota check counts the one before:
// two creates racing for the last free space of a namespace cannot both pass this gateway.
// A write takes its hold only once admission finds that it charges more storage (Take):
// the others (most updates: a VM's volumes, a label) never wait for a charging write's
// fold, since they add nothing to what the namespace's use, as read, already counts.
type Gate struct {
	holds *prometheus.CounterVec // writes that held a namespace, by resource

	mu         sync.Mutex
	namespaces map[string]*sync.Mutex
}

// NewGate is a gate no write holds yet.
func NewGate() *Gate {
	return &Gate{namespaces: map[string]*sync.Mutex{},
		holds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmop_api_quota_holds_total",
			Help: "Writes that charged more storage in a namespace with a quota, and so passed its quota gate one at a time, by resource.",
		}, []string{"resource"})}
}

// Metrics is the gate's collector: how many writes held a namespace.
func (g *Gate) Metrics() prometheus.Collector { return g.holds }

// hold waits until no other write charging ns's quotas is under way and returns the func
// that lets the next one in.
func (g *Gate) hold(k model.Kind, ns string) (release func()) {
	g.mu.Lock()
	m := g.namespaces[ns]
	if m == nil {
		m = &sync.Mutex{}
		g.namespaces[ns] = m
	}
	g.mu.Unlock()
	g.holds.WithLabelValues(k.Plural).Inc()
	m.Lock()
	return m.Unlock
}

// deferred is a write's hold on its namespace's gate, taken on demand (Take).
type deferred struct {
	g  *Gate
	k  model.Kind
	ns string

	mu      sync.Mutex
	release func() // nil until taken
}

type deferredKey struct{}

// Defer returns ctx carrying the hold of ns's gate for a write of kind k, not taken yet,
// and the func that lets it go, which the write calls once it is folded (or failed).
func (g *Gate) Defer(ctx context.Context, k model.Kind, ns string) (context.Context, func()) {
	d := &deferred{g: g, k: k, ns: ns}
	return context.WithValue(ctx, deferredKey{}, d), func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.release != nil {
			d.release()
			d.release = nil
		}
	}
}

// Take takes the hold ctx carries, once: admission does when a write charges more storage
// in a namespace with quotas, before it reads what the namespace uses. A ctx without one
// (the seeded inventory's writes) takes nothing.
func Take(ctx context.Context) {
	d, ok := ctx.Value(deferredKey{}).(*deferred)
	if !ok {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.release == nil {
		d.release = d.g.hold(d.k, d.ns)
	}
}
