package quota

import (
	"sync"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// Gate serializes the writes that charge a namespace's storage quotas, from admission until
// the read model has folded them, so that each write's quota check counts the one before:
// two creates racing for the last free space of a namespace cannot both pass this gateway.
type Gate struct {
	rm Reader

	mu         sync.Mutex
	namespaces map[string]*sync.Mutex
}

// NewGate is a gate over the quotas rm holds.
func NewGate(rm Reader) *Gate {
	return &Gate{rm: rm, namespaces: map[string]*sync.Mutex{}}
}

// Hold waits until no other write charging ns's quotas is under way and returns the func
// that lets the next one in. Kinds that charge nothing, and namespaces without quotas, pass
// at once.
func (g *Gate) Hold(k model.Kind, ns string) (release func()) {
	if !Charged(k.Kind) || !g.limited(ns) {
		return func() {}
	}
	g.mu.Lock()
	m := g.namespaces[ns]
	if m == nil {
		m = &sync.Mutex{}
		g.namespaces[ns] = m
	}
	g.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// limited tells whether ns has a quota (when the read model cannot say, it is held).
func (g *Gate) limited(ns string) bool {
	res, err := g.rm.List(readmodel.ListOptions{Plural: "resourcequotas", Namespace: ns, Limit: 1})
	return err != nil || len(res.Items) > 0
}
