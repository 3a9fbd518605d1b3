package crypto

import (
	"sync"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// encryptRefusals makes vcsim refuse every encrypting reconfigure until allowed, and counts
// the keys the provider generates meanwhile.
type encryptRefusals struct {
	mu        sync.Mutex
	refuse    bool
	generated int
	tried     []string // the keys of the refused encrypts
}

// refuseEncrypts starts refusing encrypts until the test ends or allow is called.
func refuseEncrypts(t *testing.T) *encryptRefusals {
	r := &encryptRefusals{refuse: true}
	vc.Sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch req := m.Body.(type) {
		case *types.GenerateKey:
			r.generated++
		case *types.ReconfigVM_Task:
			if enc, ok := req.Spec.Crypto.(*types.CryptoSpecEncrypt); ok && r.refuse {
				r.tried = append(r.tried, enc.CryptoKeyId.KeyId)
				return nil, &types.InvalidState{}
			}
		}
		return nil, nil
	})
	t.Cleanup(func() { vc.Sim.Intercept(nil) })
	return r
}

// allow lets encrypts through from now on and returns the keys of those refused, after
// checking that they all used the first one's key.
func (r *encryptRefusals) allow(t *testing.T) []string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuse = false
	for i, k := range r.tried {
		if k != r.tried[0] {
			t.Errorf("attempt %d encrypts with key %q, the first with %q", i+1, k, r.tried[0])
		}
	}
	return append([]string(nil), r.tried...)
}

// keysGenerated is how many keys the provider generated so far.
func (r *encryptRefusals) keysGenerated() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.generated
}
