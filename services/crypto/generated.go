package crypto

import (
	"sync"

	"github.com/vmware/govmomi/vim25/types"
)

// generatedKeys are the keys generated for VMs whose encrypt or rekey has not succeeded
// yet, by VM UID: the next attempt reuses the key instead of minting another. They live
// in memory only, so after a crash a failed attempt's key stays unused in the key
// provider and the next attempt generates one more. (The VM cannot record it: nothing
// reconfigures the VM before the encrypt itself.)
type generatedKeys struct {
	mu    sync.Mutex
	byUID map[string]types.CryptoKeyId
}

// get is the key generated for VM uid from provider, if any.
func (g *generatedKeys) get(uid, provider string) (types.CryptoKeyId, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key, ok := g.byUID[uid]
	return key, ok && key.ProviderId != nil && key.ProviderId.Id == provider
}

func (g *generatedKeys) put(uid string, key types.CryptoKeyId) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byUID == nil {
		g.byUID = map[string]types.CryptoKeyId{}
	}
	g.byUID[uid] = key
}

// settle forgets VM uid's key once the VM carries it (cur is the VM's key).
func (g *generatedKeys) settle(uid string, cur *types.CryptoKeyId) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if key, ok := g.byUID[uid]; ok && cur != nil && cur.KeyId == key.KeyId {
		delete(g.byUID, uid)
	}
}

// forget drops VM uid's key: the VM is being deleted.
func (g *generatedKeys) forget(uid string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.byUID, uid)
}
