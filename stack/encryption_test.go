package main

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// The seed document's Encryption examples, verbatim.
const (
	seedDefaultProviderVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: my-vm
  namespace: my-namespace
spec:
  className:    my-vm-class
  imageName:    vmi-0a0044d7c690bcbea
  storageClass: my-encrypted-storage-class
`
	seedEncryptionClassVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: my-vm
  namespace: my-namespace
spec:
  className:    my-vm-class
  imageName:    vmi-0a0044d7c690bcbea
  storageClass: my-encrypted-storage-class
  crypto:
    encryptionClassName: my-encryption-class
`
)

// vtpmClass is the seed's my-vm-class with a vTPM in its configSpec.
const vtpmClass = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineClass
metadata:
  name: my-vtpm-class
spec:
  hardware:
    cpus: 2
    memory: 4Gi
  configSpec:
    _typeName: VirtualMachineConfigSpec
    deviceChange:
    - _typeName: VirtualDeviceConfigSpec
      operation: add
      device:
        _typeName: VirtualTPM
        key: -1
`

// Both of the seed's encryption examples come up PoweredOn, encrypted as the seed says:
// VM home and disks with one key of the default key provider (local), which the seeded
// my-encryption-class names too; status.crypto says the same as vcsim. A VM on an
// encryption storage class was held powered off for ever before crypto encrypted. Then a
// running VM asked to encrypt waits until it is powered off.
func TestSeedEncryptionExamples(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	out := tp.kubectl("get", "encclass", "-n", "my-namespace")
	if !strings.Contains(out, "READY") {
		t.Errorf("get encclass has no Ready column:\n%s", out)
	}
	tp.eventually("my-encryption-class Ready", func() bool {
		out, _ := tp.kubectlErr("get", "encclass", "my-encryption-class", "-n", "my-namespace", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		return out == "True"
	})

	for i, doc := range []string{seedDefaultProviderVM, seedEncryptionClassVM} {
		tp.apply(doc, "")
		tp.waitPower("my-vm", "PoweredOn")
		home, disks := keysInVCenter(t, tp.vm(vc, "my-vm"))
		if home == nil || home.ProviderId == nil || home.ProviderId.Id != "local" || home.KeyId == "" {
			t.Fatalf("example %d: config.keyId = %+v, want a key of provider local", i+1, home)
		}
		for j, d := range disks {
			if d == nil || *d.ProviderId != *home.ProviderId || d.KeyId != home.KeyId {
				t.Errorf("example %d: disk %d key %+v, want the VM's %s", i+1, j, d, home.KeyId)
			}
		}
		got := tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.status.crypto.encrypted} {.status.crypto.providerID} {.status.crypto.keyID}")
		if want := `["Config","Disks"] local ` + home.KeyId; got != want {
			t.Errorf("example %d: status.crypto %q, want %q", i+1, got, want)
		}
		tp.eventually("status.volumes[].crypto", func() bool {
			out, _ := tp.kubectlErr("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.status.volumes[*].crypto.providerID}/{.status.volumes[*].crypto.keyID}")
			return out == "local/"+home.KeyId
		})
		cond := tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", `jsonpath={.status.conditions[?(@.type=="VirtualMachineEncryptionSynced")].status}`)
		if cond != "True" {
			t.Errorf("example %d: VirtualMachineEncryptionSynced %q, want True", i+1, cond)
		}
		uuid := tp.instanceUUID("my-vm")
		tp.kubectl("delete", "vm", "my-vm", "-n", "my-namespace")
		tp.eventually("my-vm destroyed", func() bool {
			_, err := vcenter.FindVM(t.Context(), vc, uuid)
			return err != nil
		})
	}

	// A running VM given a class with a vTPM (storageClass is immutable, so a class is how a
	// VM comes to ask for encryption later): not encrypted while on; powering it off
	// encrypts its home and adds the vTPM, and it powers on again.
	tp.apply(vtpmClass, "")
	tp.apply(vmNamed("running-vm", ""), "")
	tp.waitPower("running-vm", "PoweredOn")
	tp.kubectl("patch", "vm", "running-vm", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"className":"my-vtpm-class"}}`)
	encSynced := func() string {
		out, _ := tp.kubectlErr("get", "vm", "running-vm", "-n", "my-namespace", "-o",
			`jsonpath={.status.conditions[?(@.type=="VirtualMachineEncryptionSynced")].status} {.status.conditions[?(@.type=="VirtualMachineEncryptionSynced")].reason} {.status.conditions[?(@.type=="VirtualMachineEncryptionSynced")].message}`)
		return out
	}
	tp.eventually("InvalidState while on", func() bool { return encSynced() == "False InvalidState Must be powered off to encrypt VM." })
	if home, _ := keysInVCenter(t, tp.vm(vc, "running-vm")); home != nil {
		t.Fatalf("a powered-on VM was encrypted: %+v", home)
	}
	tp.kubectl("patch", "vm", "running-vm", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"powerState":"PoweredOff"}}`)
	tp.eventually("encrypted once off", func() bool { return encSynced() == "True True " })
	home, _ := keysInVCenter(t, tp.vm(vc, "running-vm"))
	if home == nil || home.ProviderId == nil || home.ProviderId.Id != "local" {
		t.Fatalf("after power-off: config.keyId = %+v, want a key of local", home)
	}
	got := tp.kubectl("get", "vm", "running-vm", "-n", "my-namespace", "-o", "jsonpath={.status.crypto.encrypted} {.status.crypto.hasVTPM} {.status.crypto.keyID}")
	if want := `["Config"] true ` + home.KeyId; got != want {
		t.Errorf("status.crypto %q, want %q", got, want)
	}
	tp.kubectl("patch", "vm", "running-vm", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"powerState":"PoweredOn"}}`)
	tp.waitPower("running-vm", "PoweredOn")
}

// keysInVCenter reads a VM's home key and its disks' keys with govmomi.
func keysInVCenter(t *testing.T, vm *object.VirtualMachine) (*types.CryptoKeyId, []*types.CryptoKeyId) {
	t.Helper()
	var m mo.VirtualMachine
	if err := vm.Properties(t.Context(), vm.Reference(), []string{"config.keyId", "config.hardware.device"}, &m); err != nil {
		t.Fatal(err)
	}
	var disks []*types.CryptoKeyId
	for _, d := range m.Config.Hardware.Device {
		if disk, ok := d.(*types.VirtualDisk); ok {
			b, _ := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
			if b == nil {
				disks = append(disks, nil)
				continue
			}
			disks = append(disks, b.KeyId)
		}
	}
	if len(disks) == 0 {
		t.Fatal("the VM has no disk")
	}
	return m.Config.KeyId, disks
}
