package crypto

import (
	"context"
	"sync"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// An encrypt refused on one replica, which then stops, is retried by another replica (a
// fresh process) with the key generated for the first attempt: the key provider mints one
// key for the VM, whichever replica reconciles it.
func TestEncryptRetriedByAnotherReplicaReusesTheKey(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	if err := vc.PutObjects(t.Context(), js, seeded...); err != nil {
		t.Fatal(err)
	}
	v := deploytest.NewVM("my-namespace", "enc-handed-over", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class"})

	var mu sync.Mutex
	refuse := true
	generated := 0
	var tried []string // the keys of the refused encrypts
	vc.Sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		mu.Lock()
		defer mu.Unlock()
		switch req := m.Body.(type) {
		case *types.GenerateKey:
			generated++
		case *types.ReconfigVM_Task:
			if enc, ok := req.Spec.Crypto.(*types.CryptoSpecEncrypt); ok && refuse {
				tried = append(tried, enc.CryptoKeyId.KeyId)
				return nil, &types.InvalidState{}
			}
		}
		return nil, nil
	})
	t.Cleanup(func() { vc.Sim.Intercept(nil) })

	// The first replica's attempt is refused; then it stops.
	first, stopFirst := context.WithCancel(t.Context())
	firstDone := make(chan error, 1)
	go func() { firstDone <- run(first, js) }()
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	synced(t, js, v, 1, "False", model.ReasonReconfigureError)
	stopFirst()
	if err := <-firstDone; err != nil {
		t.Fatalf("first replica: %v", err)
	}

	// Another replica, knowing nothing the first held in memory, tries again, refused once
	// more, and then succeeds.
	second, stopSecond := context.WithCancel(t.Context())
	secondDone := make(chan error, 1)
	go func() { secondDone <- run(second, js) }()
	t.Cleanup(func() {
		stopSecond()
		if err := <-secondDone; err != nil {
			t.Errorf("second replica: %v", err)
		}
	})
	v.Put(t, js, false)
	synced(t, js, v, generation(t, js, v), "False", model.ReasonReconfigureError)
	mu.Lock()
	refuse = false
	attempts := append([]string(nil), tried...)
	mu.Unlock()
	if len(attempts) < 2 || attempts[0] == "" {
		t.Fatalf("refused encrypts with keys %q, want one on each replica with a generated key", attempts)
	}
	for i, k := range attempts[1:] {
		if k != attempts[0] {
			t.Errorf("attempt %d encrypts with key %q, the first with %q", i+2, k, attempts[0])
		}
	}

	v.Put(t, js, false)
	synced(t, js, v, generation(t, js, v), "True", "")
	if _, key := keyOf(must(keys(t, vm))); key != attempts[0] {
		t.Errorf("the VM is encrypted with key %q, want the one generated first, %q", key, attempts[0])
	}
	mu.Lock()
	defer mu.Unlock()
	if generated != 1 {
		t.Errorf("%d keys generated over two replicas, want 1", generated)
	}
}
