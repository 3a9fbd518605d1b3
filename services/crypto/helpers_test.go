package crypto

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/crypto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"

	"github.com/vmop/vmop/pkg/vcenter"
)

// synced waits for v's crypto slice of its current generation with EncryptionSynced of
// the given status and reason ("" for any) and returns its status.
func synced(t *testing.T, js jetstream.JetStream, v *deploytest.VM, gen int64, status, reason string) model.VirtualMachineStatus {
	t.Helper()
	_, st := v.WaitStatus(t, js, model.ServiceCrypto, "EncryptionSynced "+status+" "+reason, func(s events.Slice, st model.VirtualMachineStatus) bool {
		got, r := deploytest.Condition(st, model.ConditionEncryptionSynced)
		return s.Generation >= gen && got == status && (reason == "" || r == reason)
	})
	return st
}

// keys reads, as govmomi sees them in vcsim, the VM home's key and each disk's key.
func keys(t *testing.T, vm *object.VirtualMachine) (home *types.CryptoKeyId, disks []*types.CryptoKeyId, vtpm bool) {
	t.Helper()
	var mvm mo.VirtualMachine
	if err := vm.Properties(t.Context(), vm.Reference(), []string{"config.keyId", "config.hardware.device"}, &mvm); err != nil {
		t.Fatal(err)
	}
	for _, d := range mvm.Config.Hardware.Device {
		switch d := d.(type) {
		case *types.VirtualDisk:
			disks = append(disks, vcenter.BackingOf(d).KeyID)
		case *types.VirtualTPM:
			vtpm = true
		}
	}
	return mvm.Config.KeyId, disks, vtpm
}

// cryptoReconfigures counts the reconfigures of vm whose spec carried a crypto spec of
// type T, from vCenter's event history.
func cryptoReconfigures[T types.BaseCryptoSpec](t *testing.T, vm *object.VirtualMachine) int {
	t.Helper()
	evs, err := event.NewManager(vc.Client.Client).QueryEvents(t.Context(), types.EventFilterSpec{
		Entity:      &types.EventFilterSpecByEntity{Entity: vm.Reference(), Recursion: types.EventFilterSpecRecursionOptionSelf},
		EventTypeId: []string{"VmReconfiguredEvent"},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if r, ok := e.(*types.VmReconfiguredEvent); ok {
			if _, ok := r.ConfigSpec.Crypto.(T); ok {
				n++
			}
		}
	}
	return n
}

func keyOf(k *types.CryptoKeyId) (provider, key string) {
	if k == nil {
		return "", ""
	}
	if k.ProviderId != nil {
		provider = k.ProviderId.Id
	}
	return provider, k.KeyId
}

// putClass puts an EncryptionClass in namespace ns.
func putClass(t *testing.T, js jetstream.JetStream, ns, name, provider, key string) {
	t.Helper()
	body := model.EncryptionClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "encryption.vmware.com/v1alpha1", Kind: "EncryptionClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: k8stypes.UID(uuid.NewString()), Generation: 1},
		Spec:       model.EncryptionClassSpec{KeyProvider: provider, KeyID: key},
	}
	if err := deploytest.PutObject(t.Context(), js, events.Ref{Plural: pluralClasses, Namespace: ns, Name: name}, body); err != nil {
		t.Fatal(err)
	}
}

// generateKey has provider generate a key in vcsim, as an admin would for a class.
func generateKey(t *testing.T, provider string) string {
	t.Helper()
	key, err := crypto.NewManagerKmip(vc.Client.Client).GenerateKey(t.Context(), provider)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// withClass sets v's spec.crypto.encryptionClassName ("" removes it) and puts the spec.
func withClass(t *testing.T, js jetstream.JetStream, v *deploytest.VM, class string) int64 {
	t.Helper()
	if v.Spec.Crypto == nil {
		v.Spec.Crypto = &model.VirtualMachineCryptoSpec{}
	}
	v.Spec.Crypto.EncryptionClassName = class
	v.Put(t, js, false)
	return generation(t, js, v)
}

// generation is v's current generation, from its last spec.
func generation(t *testing.T, js jetstream.JetStream, v *deploytest.VM) int64 {
	t.Helper()
	rec, err := events.LastSpec(t.Context(), js, v.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Metadata struct{ Generation int64 } `json:"metadata"`
	}
	if err := json.Unmarshal(rec.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m.Metadata.Generation
}
