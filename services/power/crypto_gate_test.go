package power_test

import (
	"encoding/json"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// A VM that asks for no encryption (its storage class does not encrypt, its class gives no
// vTPM) powers on without crypto having said anything; one on an encryption storage class
// waits for VirtualMachineEncryptionSynced.
func TestCryptoHoldsOnlyWhatAsksForEncryption(t *testing.T) {
	h := start(t)
	h.putStorageClass("my-storage-class", false)
	h.putStorageClass("my-encrypted-storage-class", true)

	plain := h.createVM("asks-nothing")
	h.putSpec(plain)
	for _, svc := range []string{model.ServicePlacement, model.ServiceStorage, model.ServiceNetwork} {
		h.publishInput(plain, svc, metav1.ConditionTrue, model.ReasonTrue)
	}
	h.waitStatus(plain, "powered on without crypto", synced(model.PowerStateOn))

	enc := h.createVM("asks-encryption")
	enc.obj.Spec.StorageClass = "my-encrypted-storage-class"
	h.putSpec(enc)
	for _, svc := range []string{model.ServicePlacement, model.ServiceStorage, model.ServiceNetwork} {
		h.publishInput(enc, svc, metav1.ConditionTrue, model.ReasonTrue)
	}
	h.waitStatus(enc, "waiting for crypto", notSynced(model.ReasonNotSynced, "VirtualMachineEncryptionSynced (not reported by crypto)"))
	if got := h.vcPower(enc); got != types.VirtualMachinePowerStatePoweredOff {
		t.Fatalf("VM asking for encryption is %s before crypto reported, want poweredOff", got)
	}
	h.publishInput(enc, model.ServiceCrypto, metav1.ConditionTrue, model.ReasonTrue)
	h.waitStatus(enc, "powered on once encrypted", synced(model.PowerStateOn))
}

// putStorageClass stores a StorageClass, labelled an encryption storage class when
// encrypting (the record admission and the services read, api-rules §9.6).
func (h *harness) putStorageClass(name string, encrypting bool) {
	h.t.Helper()
	sc := model.StorageClass{Provisioner: "csi.vsphere.vmware.com", Parameters: map[string]string{"storagePolicyID": name}}
	sc.APIVersion, sc.Kind, sc.Name = "storage.k8s.io/v1", "StorageClass", name
	if encrypting {
		sc.Labels = map[string]string{model.EncryptionEnabledLabel: "true"}
	}
	body, err := json.Marshal(sc)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := events.AppendSpec(h.ctx, h.js, events.Ref{Plural: "storageclasses", Name: name}, events.OpPut, body, 0, nil); err != nil {
		h.t.Fatal(err)
	}
}
