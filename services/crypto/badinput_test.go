package crypto

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// An EncryptionClass naming a provider or a key vCenter does not have says so in its
// Ready condition, and so does every VM using it, which is left as it is: no reconfigure.
// A class that does not exist is told too; once it exists, the VM is encrypted.
func TestUnknownProviderOrKey(t *testing.T) {
	js := startService(t)
	const ns = "my-namespace"
	putClass(t, js, ns, "no-provider", "no-such-provider", "")
	putClass(t, js, ns, "no-key", inventory.KeyProvider, "no-such-key")

	for _, tt := range []struct{ class, classReason, vmReason string }{
		{"no-provider", model.ReasonKeyProviderNotFound, model.ReasonEncryptionClassInvalid},
		{"no-key", model.ReasonKeyNotFound, model.ReasonEncryptionClassInvalid},
		{"missing", "", model.ReasonEncryptionClassNotFound},
	} {
		t.Run(tt.class, func(t *testing.T) {
			if tt.classReason != "" {
				c := classReady(t, js, ns, tt.class, func(c *metav1.Condition) bool { return c.Status == metav1.ConditionFalse })
				if c.Reason != tt.classReason {
					t.Errorf("class Ready reason %q (%s), want %q", c.Reason, c.Message, tt.classReason)
				}
			}
			v := deploytest.NewVM(ns, "bad-"+tt.class, model.VirtualMachineSpec{
				ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class",
				Crypto: &model.VirtualMachineCryptoSpec{EncryptionClassName: tt.class},
			})
			v.Put(t, js, false)
			synced(t, js, v, 1, "False", tt.vmReason) // before the VM exists
			vm := v.Deploy(t, vc, js, inventory.PhotonImage)
			v.Put(t, js, false)
			synced(t, js, v, 2, "False", tt.vmReason)
			if n := cryptoReconfigures[types.BaseCryptoSpec](t, vm); n != 0 {
				t.Errorf("%d crypto reconfigures, want none", n)
			}
			if home, _, _ := keys(t, vm); home != nil {
				t.Errorf("VM encrypted with %+v", home)
			}
			if tt.classReason == "" {
				putClass(t, js, ns, tt.class, inventory.OtherKeyProvider, "")
				classReady(t, js, ns, tt.class, func(c *metav1.Condition) bool { return c.Status == metav1.ConditionTrue })
				st := synced(t, js, v, 2, "True", "")
				expectKey(t, vm, inventory.OtherKeyProvider, st.Crypto.KeyID)
			}
		})
	}
}

// A VM asking for encryption that refuses the default key provider and names no class has
// no key: it says so and is left as it is.
func TestNoKeyToEncryptWith(t *testing.T) {
	js := startService(t)
	no := false
	v := deploytest.NewVM("my-namespace", "no-key-source", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class",
		Crypto: &model.VirtualMachineCryptoSpec{UseDefaultKeyProvider: &no},
	})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.Put(t, js, false)
	synced(t, js, v, 2, "False", model.ReasonNoDefaultKeyProvider)
	if n := cryptoReconfigures[types.BaseCryptoSpec](t, vm); n != 0 {
		t.Errorf("%d crypto reconfigures, want none", n)
	}
}

// classReady waits for the crypto slice of an EncryptionClass whose Ready condition
// satisfies ok, and returns that condition.
func classReady(t *testing.T, js jetstream.JetStream, ns, name string, ok func(*metav1.Condition) bool) *metav1.Condition {
	t.Helper()
	ref := events.Ref{Plural: pluralClasses, Namespace: ns, Name: name}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if rec, err := events.LastStatus(t.Context(), js, ref, model.ServiceCrypto); err == nil {
			var st model.EncryptionClassStatus
			if json.Unmarshal(rec.Slice.Status, &st) == nil {
				if c := reconcile.FindCondition(st.Conditions, model.ConditionReady); c != nil && ok(c) {
					return c
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Ready condition as wanted on encryption class %s/%s", ns, name)
		}
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}
