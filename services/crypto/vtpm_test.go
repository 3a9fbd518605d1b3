package crypto

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// A VM whose class gives it a vTPM gets it while off, with its home encrypted by the
// default key provider and its disks not (the seed's table: vTPM → Config); a class
// without one takes it away again while off.
func TestVTPM(t *testing.T) {
	js := startService(t)
	const ns = "my-namespace"
	putVMClass(t, js, ns, "vtpm-class", true)
	putVMClass(t, js, ns, "no-vtpm-class", false)
	v := deploytest.NewVM(ns, "with-vtpm", model.VirtualMachineSpec{ClassName: "vtpm-class", StorageClass: "my-storage-class"})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	st := synced(t, js, v, 1, "True", "")

	home, disks, vtpm := keys(t, vm)
	provider, key := keyOf(home)
	if !vtpm || provider != inventory.KeyProvider || key == "" {
		t.Fatalf("vcsim: vTPM %v, config.keyId %s/%q; want a vTPM and a key of %s", vtpm, provider, key, inventory.KeyProvider)
	}
	for i, d := range disks {
		if d != nil {
			t.Errorf("disk %d encrypted with %+v; a vTPM encrypts only the VM home", i, d)
		}
	}
	want := &model.VirtualMachineCryptoStatus{
		Encrypted:  []model.VirtualMachineEncryptionType{model.VirtualMachineEncryptionTypeConfig},
		ProviderID: inventory.KeyProvider, KeyID: key, HasVTPM: true,
	}
	if diff := cmp.Diff(want, st.Crypto); diff != "" {
		t.Errorf("status.crypto (-want +got):\n%s", diff)
	}

	v.Spec.ClassName = "no-vtpm-class"
	v.Put(t, js, false)
	st = synced(t, js, v, 2, "False", model.ReasonInvalidChanges) // the VM stays encrypted
	if _, _, vtpm := keys(t, vm); vtpm || st.Crypto == nil || st.Crypto.HasVTPM {
		t.Errorf("after the class without vTPM: vcsim vTPM %v, status.crypto %+v; want it removed", vtpm, st.Crypto)
	}
}

// putVMClass puts a VirtualMachineClass of 2 CPUs and 4Gi whose configSpec adds a vTPM
// when vtpm.
func putVMClass(t *testing.T, js jetstream.JetStream, ns, name string, vtpm bool) {
	t.Helper()
	mem := resource.MustParse("4Gi")
	spec := model.VirtualMachineClassSpec{Hardware: &model.VirtualMachineClassHardware{Cpus: 2, Memory: &mem}}
	if vtpm {
		spec.ConfigSpec = json.RawMessage(`{"_typeName":"VirtualMachineConfigSpec","deviceChange":[{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualTPM","key":-1}}]}`)
	}
	body := model.VirtualMachineClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "vmoperator.vmware.com/v1alpha5", Kind: "VirtualMachineClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: k8stypes.UID(uuid.NewString()), Generation: 1},
		Spec:       spec,
	}
	if err := deploytest.PutObject(t.Context(), js, events.Ref{Plural: "virtualmachineclasses", Namespace: ns, Name: name}, body); err != nil {
		t.Fatal(err)
	}
}
