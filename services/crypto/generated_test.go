package crypto

import (
	"context"
	"testing"

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

	refusals := refuseEncrypts(t)

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
	attempts := refusals.allow(t)
	if len(attempts) < 2 || attempts[0] == "" {
		t.Fatalf("refused encrypts with keys %q, want one on each replica with a generated key", attempts)
	}

	v.Put(t, js, false)
	synced(t, js, v, generation(t, js, v), "True", "")
	if _, key := keyOf(must(keys(t, vm))); key != attempts[0] {
		t.Errorf("the VM is encrypted with key %q, want the one generated first, %q", key, attempts[0])
	}
	if n := refusals.keysGenerated(); n != 1 {
		t.Errorf("%d keys generated over two replicas, want 1", n)
	}
}
