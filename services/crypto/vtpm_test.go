package crypto

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// A VM whose class gives it a vTPM gets it while off, with its home encrypted by the
// default key provider and its disks not (the seed's table: vTPM → Config); a class
// without one takes it away again while off.
func TestVTPM(t *testing.T) {
	js := startService(t)
	const ns = "my-namespace"
	withVTPM := putVMClass(t, js, ns, "vtpm-class", true)
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

	// The class edited to add no vTPM, or deleted, changes nothing: a VM gets a class's
	// configuration by a resize (the seed's Resizing), which has not happened.
	touch := func(gen int64) {
		t.Helper()
		v.Annotations = map[string]string{"example.com/touched": fmt.Sprint(gen)} // a change crypto reads
		v.Put(t, js, false)
		synced(t, js, v, gen, "True", "")
		if _, _, vtpm := keys(t, vm); !vtpm {
			t.Fatalf("generation %d: the vTPM was removed without a resize", gen)
		}
	}
	withVTPM.Generation++
	writeVMClass(t, js, ns, withVTPM, false)
	touch(2)
	if err := deploytest.DeleteObject(t.Context(), js, events.Ref{Plural: "virtualmachineclasses", Namespace: ns, Name: withVTPM.Name}); err != nil {
		t.Fatal(err)
	}
	touch(3)

	// Resized to a class without one (power records the class with the configuration),
	// the vTPM goes while the VM is off.
	noVTPM := putVMClass(t, js, ns, "no-vtpm-class", false)
	applyClass(t, vm, noVTPM)
	v.Spec.ClassName = "no-vtpm-class"
	v.Put(t, js, false)
	st = synced(t, js, v, 4, "False", model.ReasonInvalidChanges) // the VM stays encrypted
	if _, _, vtpm := keys(t, vm); vtpm || st.Crypto == nil || st.Crypto.HasVTPM {
		t.Errorf("after the resize to the class without vTPM: vcsim vTPM %v, status.crypto %+v; want it removed", vtpm, st.Crypto)
	}
}

// applyClass records in the VM that it has class c's configuration, as placement's create
// and power's resize do.
func applyClass(t *testing.T, vm *object.VirtualMachine, c model.AppliedClass) {
	t.Helper()
	task, err := vm.Reconfigure(t.Context(), types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{vcenter.AppliedClassOption(c)}})
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// putVMClass puts a new VirtualMachineClass of 2 CPUs and 4Gi whose configSpec adds a
// vTPM when vtpm, and returns it as a VM records it applied.
func putVMClass(t *testing.T, js jetstream.JetStream, ns, name string, vtpm bool) model.AppliedClass {
	t.Helper()
	c := model.AppliedClass{Name: name, UID: uuid.NewString(), Generation: 1}
	writeVMClass(t, js, ns, c, vtpm)
	return c
}

// writeVMClass appends class c's record: a new class, or an edit of it (a later generation).
func writeVMClass(t *testing.T, js jetstream.JetStream, ns string, c model.AppliedClass, vtpm bool) {
	t.Helper()
	mem := resource.MustParse("4Gi")
	spec := model.VirtualMachineClassSpec{Hardware: &model.VirtualMachineClassHardware{Cpus: 2, Memory: &mem}}
	if vtpm {
		spec.ConfigSpec = json.RawMessage(`{"_typeName":"VirtualMachineConfigSpec","deviceChange":[{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualTPM","key":-1}}]}`)
	}
	body := model.VirtualMachineClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "vmoperator.vmware.com/v1alpha5", Kind: "VirtualMachineClass"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns, UID: k8stypes.UID(c.UID), Generation: c.Generation},
		Spec:       spec,
	}
	if err := deploytest.ReplaceObject(t.Context(), js, events.Ref{Plural: "virtualmachineclasses", Namespace: ns, Name: c.Name}, body); err != nil {
		t.Fatal(err)
	}
}
