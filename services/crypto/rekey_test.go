package crypto

import (
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// The seed's second example and its rekey rules: a VM of an EncryptionClass is encrypted
// with the class's provider; switching to the seed's other keyless class of the same
// provider changes nothing; a class with another key ID, or another provider, rekeys the
// VM and its disks (a shallow recrypt); removing the class rekeys with the default key
// provider.
func TestEncryptionClassAndRekey(t *testing.T) {
	js := startService(t)
	const ns = "my-namespace-1"
	putClass(t, js, ns, "my-encryption-class-1", inventory.KeyProvider, "")
	putClass(t, js, ns, "my-encryption-class-2", inventory.KeyProvider, "")
	keyed := generateKey(t, inventory.KeyProvider)
	putClass(t, js, ns, "keyed", inventory.KeyProvider, keyed)
	putClass(t, js, ns, "other-provider", inventory.OtherKeyProvider, "")

	v := deploytest.NewVM(ns, "enc-class", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class",
		Crypto: &model.VirtualMachineCryptoSpec{EncryptionClassName: "my-encryption-class-1"},
	})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	st := synced(t, js, v, 1, "True", "")
	first := expectKey(t, vm, inventory.KeyProvider, "")
	if st.Crypto == nil || st.Crypto.KeyID != first || st.Crypto.ProviderID != inventory.KeyProvider {
		t.Errorf("status.crypto = %+v, want %s/%s", st.Crypto, inventory.KeyProvider, first)
	}

	gen := withClass(t, js, v, "my-encryption-class-2")
	synced(t, js, v, gen, "True", "")
	expectKey(t, vm, inventory.KeyProvider, first)
	if n := cryptoReconfigures[*types.CryptoSpecShallowRecrypt](t, vm); n != 0 {
		t.Errorf("switching between keyless classes of one provider: %d rekeys, want none", n)
	}

	gen = withClass(t, js, v, "keyed")
	st = synced(t, js, v, gen, "True", "")
	expectKey(t, vm, inventory.KeyProvider, keyed)
	if st.Crypto.KeyID != keyed {
		t.Errorf("status.crypto.keyID = %q, want %q", st.Crypto.KeyID, keyed)
	}

	gen = withClass(t, js, v, "other-provider")
	st = synced(t, js, v, gen, "True", "")
	other := expectKey(t, vm, inventory.OtherKeyProvider, "")
	if st.Crypto.ProviderID != inventory.OtherKeyProvider || st.Crypto.KeyID != other {
		t.Errorf("status.crypto = %+v, want %s/%s", st.Crypto, inventory.OtherKeyProvider, other)
	}

	gen = withClass(t, js, v, "")
	st = synced(t, js, v, gen, "True", "")
	last := expectKey(t, vm, inventory.KeyProvider, "")
	if last == keyed || st.Crypto.ProviderID != inventory.KeyProvider {
		t.Errorf("after removing the class: key %s, status.crypto %+v; want a new key of the default provider", last, st.Crypto)
	}
	if n := cryptoReconfigures[*types.CryptoSpecShallowRecrypt](t, vm); n != 3 {
		t.Errorf("%d rekeys, want 3", n)
	}
	if n := cryptoReconfigures[*types.CryptoSpecEncrypt](t, vm); n != 1 {
		t.Errorf("%d encrypts, want 1", n)
	}
}

// expectKey checks that vm's home and every disk have one key of provider (key, when not
// ""), and returns it.
func expectKey(t *testing.T, vm *object.VirtualMachine, provider, key string) string {
	t.Helper()
	home, disks, _ := keys(t, vm)
	p, k := keyOf(home)
	if p != provider || k == "" || key != "" && k != key {
		t.Fatalf("config.keyId = %s/%q, want %s/%q", p, k, provider, key)
	}
	for i, d := range disks {
		if dp, dk := keyOf(d); dp != p || dk != k {
			t.Errorf("disk %d key %s/%s, want %s/%s", i, dp, dk, p, k)
		}
	}
	return k
}
