package crypto

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// A VM nothing asks to encrypt is reported unencrypted and in sync.
func TestNotEncrypted(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "plain", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-storage-class"})
	v.Put(t, js, false)
	_, st := v.WaitStatus(t, js, model.ServiceCrypto, "a first slice", func(s events.Slice, st model.VirtualMachineStatus) bool {
		return s.Generation == 1
	})
	if s, _ := deploytest.Condition(st, model.ConditionEncryptionSynced); s != "" || st.Crypto != nil {
		t.Errorf("before the VM exists: EncryptionSynced %q, crypto %+v; want neither", s, st.Crypto)
	}
	v.Deploy(t, vc, js, inventory.PhotonImage)
	_, st = v.WaitStatus(t, js, model.ServiceCrypto, "EncryptionSynced True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, _ := deploytest.Condition(st, model.ConditionEncryptionSynced)
		return s == "True"
	})
	if st.Crypto != nil {
		t.Errorf("status.crypto = %+v, want none for an unencrypted VM", st.Crypto)
	}
}

// A VM whose encryption class and storage class ask for encryption is not in sync while
// it is not encrypted, saying that encryption arrives later; once its home is encrypted
// (here directly in vCenter) the observed keys, disks and vTPM are reported and it is.
func TestEncryptionAsked(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "secret", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class",
		Crypto: &model.VirtualMachineCryptoSpec{EncryptionClassName: inventory.EncryptionClassName},
	})
	v.Put(t, js, false)
	_, st := v.WaitStatus(t, js, model.ServiceCrypto, "EncryptionSynced False", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, r := deploytest.Condition(st, model.ConditionEncryptionSynced)
		return s == "False" && r == model.ReasonInvalidState
	})
	msg := message(st, model.ConditionEncryptionSynced)
	for _, want := range []string{`encryption class "my-encryption-class"`, `encryption storage class "my-encrypted-storage-class"`, "later release"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}

	vm := v.Deploy(t, vc, js, inventory.PhotonImage)

	task, err := vm.Reconfigure(t.Context(), types.VirtualMachineConfigSpec{
		Crypto: &types.CryptoSpecEncrypt{CryptoKeyId: types.CryptoKeyId{ProviderId: &types.KeyProviderId{Id: inventory.KeyProvider}}},
		DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: &types.VirtualTPM{VirtualDevice: types.VirtualDevice{Key: -1}},
		}},
	})
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatalf("encrypt in vcsim: %v", err)
	}
	v.Put(t, js, false) // any trigger will do; the resync would also come
	_, st = v.WaitStatus(t, js, model.ServiceCrypto, "EncryptionSynced True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, _ := deploytest.Condition(st, model.ConditionEncryptionSynced)
		return s == "True"
	})
	if st.Crypto == nil || st.Crypto.KeyID == "" {
		t.Fatalf("status.crypto = %+v, want the VM's key", st.Crypto)
	}
	want := &model.VirtualMachineCryptoStatus{
		Encrypted:  []model.VirtualMachineEncryptionType{model.VirtualMachineEncryptionTypeConfig},
		ProviderID: inventory.KeyProvider, KeyID: st.Crypto.KeyID, HasVTPM: true,
	}
	if diff := cmp.Diff(want, st.Crypto); diff != "" {
		t.Errorf("status.crypto (-want +got):\n%s", diff)
	}
}

func message(st model.VirtualMachineStatus, typ string) string {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}
