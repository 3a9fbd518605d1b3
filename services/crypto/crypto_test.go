package crypto

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// A VM nothing asks to encrypt is reported unencrypted and in sync, before it exists too.
func TestNotEncrypted(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "plain", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-storage-class"})
	v.Put(t, js, false)
	if st := synced(t, js, v, 1, "True", ""); st.Crypto != nil {
		t.Errorf("before the VM exists: crypto %+v; want none", st.Crypto)
	}
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.Put(t, js, false)
	if st := synced(t, js, v, 2, "True", ""); st.Crypto != nil {
		t.Errorf("status.crypto = %+v, want none for an unencrypted VM", st.Crypto)
	}
	if n := cryptoReconfigures[*types.CryptoSpecEncrypt](t, vm); n != 0 {
		t.Errorf("%d encrypt reconfigures, want none", n)
	}
}

// The seed's first example: a VM on an encryption storage class, no EncryptionClass, is
// encrypted with the default key provider, its home and its disks with one key.
func TestEncryptWithDefaultProvider(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "enc-default", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class"})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	st := synced(t, js, v, 1, "True", "")

	home, disks, _ := keys(t, vm)
	provider, key := keyOf(home)
	if provider != inventory.KeyProvider || key == "" {
		t.Fatalf("config.keyId = %s/%q, want a key of %s", provider, key, inventory.KeyProvider)
	}
	if len(disks) == 0 {
		t.Fatal("the VM has no disk")
	}
	for i, d := range disks {
		if !cmp.Equal(d, home) {
			t.Errorf("disk %d key %+v, want the VM's %+v", i, d, home)
		}
	}
	want := &model.VirtualMachineCryptoStatus{
		Encrypted:  []model.VirtualMachineEncryptionType{model.VirtualMachineEncryptionTypeConfig, model.VirtualMachineEncryptionTypeDisks},
		ProviderID: inventory.KeyProvider, KeyID: key,
	}
	if diff := cmp.Diff(want, st.Crypto); diff != "" {
		t.Errorf("status.crypto (-want +got):\n%s", diff)
	}
	if n := cryptoReconfigures[*types.CryptoSpecEncrypt](t, vm); n != 1 {
		t.Errorf("%d encrypt reconfigures, want 1", n)
	}
}
