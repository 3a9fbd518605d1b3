package model

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Fixtures of the network, host name, volume, controller, CD-ROM and placement rule tests:
// a namespace's inventory, a VM that passes every rule, and a table runner over admitVM.

const devNS = "ns"

// devLookup is the namespace's inventory: storage classes gold and enc (an encryption
// storage class), claims named for their access mode and class, class small, one image.
func devLookup() *fakeLookup {
	sc := func(name string, encrypted bool) *StorageClass {
		c := &StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "csi.vsphere.vmware.com",
			Parameters: map[string]string{StoragePolicyIDParameter: "policy-" + name}}
		if encrypted {
			c.Labels = map[string]string{EncryptionEnabledLabel: "true"}
		}
		return c
	}
	claim := func(class string, mode PersistentVolumeAccessMode) *PersistentVolumeClaim {
		return &PersistentVolumeClaim{Spec: PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []PersistentVolumeAccessMode{mode}}}
	}
	return &fakeLookup{
		nsImages: testImages.ns, clusterImages: testImages.cluster,
		storageClasses: map[string]*StorageClass{"gold": sc("gold", false), "enc": sc("enc", true)},
		pvcs: map[string]*PersistentVolumeClaim{
			devNS + "/claim-rwo":     claim("gold", AccessModeReadWriteOnce),
			devNS + "/claim-rwx":     claim("gold", AccessModeReadWriteMany),
			devNS + "/claim-enc":     claim("enc", AccessModeReadWriteOnce),
			devNS + "/claim-enc-rwx": claim("enc", AccessModeReadWriteMany),
		},
		classes: map[string]*VirtualMachineClass{devNS + "/small": {ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: devNS}}},
		images: map[string]*VirtualMachineImageStatus{
			devNS + "/VirtualMachineImage/vmi-0a0044d7c690bcbea": {Name: "photon-5"},
		},
	}
}

// devEnv is a non-privileged user in a namespace of the Named network provider.
func devEnv() VMEnv {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	return VMEnv{
		BuildVersion: "v-test",
		Now:          func() time.Time { return now },
		NewUUID:      counterUUIDs(),
		Namespace:    NamespaceSettings{DefaultNetwork: "VM Network"},
		Lookup:       devLookup(),
	}
}

func privileged(env *VMEnv) { env.Privileged, env.UpgradeExempt = true, true }

// devVM is a VM as a user writes it on create; it passes every rule.
func devVM() *VirtualMachine {
	return &VirtualMachine{
		TypeMeta:   metav1.TypeMeta{APIVersion: "vmoperator.vmware.com/v1alpha5", Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{Name: "my-vm", Namespace: devNS},
		Spec:       VirtualMachineSpec{ClassName: "small", ImageName: "vmi-0a0044d7c690bcbea", StorageClass: "gold"},
	}
}

// devStored is devVM as the gateway stored it, then changed by change without admission
// (what the VM service or an earlier rule set may have left there).
func devStored(t *testing.T, change func(*VirtualMachine)) *VirtualMachine {
	t.Helper()
	vm, env := devVM(), devEnv()
	privileged(&env)
	if code, errs := admitVM(t, vm, nil, env); code != 200 {
		t.Fatalf("the base VM is refused: %d %v", code, errs)
	}
	change(vm)
	return vm
}

// devUpgraded marks vm as upgraded by the VM service for the test build (§0.4).
func devUpgraded(vm *VirtualMachine) {
	vm.Annotations[AnnotationUpgradedToBuild] = "v-test"
	vm.Annotations[AnnotationUpgradedToSchema] = SchemaVersion
	vm.Annotations[AnnotationUpgradedToFeature] = "7"
}

func devCopy(t *testing.T, vm *VirtualMachine) *VirtualMachine {
	t.Helper()
	out := new(VirtualMachine)
	if err := remarshalJSON(vm, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func devPtr[T any](v T) *T { return &v }

// devVolume is a volume with the modes D12 gives it, optionally placed at type:bus:unit.
func devVolume(name, claim string) VirtualMachineVolume {
	v := VirtualMachineVolume{Name: name, Removable: devPtr(true), DiskMode: VolumeDiskModePersistent, SharingMode: VolumeSharingModeNone}
	if claim != "" {
		v.PersistentVolumeClaim = &PersistentVolumeClaimVolumeSource{ClaimName: claim}
	}
	return v
}

func devPlaced(v VirtualMachineVolume, t ControllerType, bus, unit int32) VirtualMachineVolume {
	v.ControllerType, v.ControllerBusNumber, v.UnitNumber = t, &bus, &unit
	return v
}

func devHardware(vm *VirtualMachine) *VirtualMachineHardwareSpec {
	if vm.Spec.Hardware == nil {
		vm.Spec.Hardware = &VirtualMachineHardwareSpec{}
	}
	return vm.Spec.Hardware
}

func devNetwork(vm *VirtualMachine) *VirtualMachineNetworkSpec {
	if vm.Spec.Network == nil {
		vm.Spec.Network = &VirtualMachineNetworkSpec{}
	}
	return vm.Spec.Network
}

// devErr is an expected field error: its type and rendered path.
type devErr struct {
	Type field.ErrorType
	Path string
}

// devCase is one rule case. Without old it is a create of devVM changed by vm; with old
// it is an update whose stored object is devStored(old) and whose new object is a copy of
// it changed by vm.
type devCase struct {
	name  string
	env   func(*VMEnv)
	old   func(*VirtualMachine)
	vm    func(*VirtualMachine)
	code  int
	errs  []devErr
	check func(t *testing.T, admitted *VirtualMachine)
}

func runDevCases(t *testing.T, cases []devCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := devEnv()
			if c.env != nil {
				c.env(&env)
			}
			vm, old := devVM(), (*VirtualMachine)(nil)
			if c.old != nil {
				old = devStored(t, c.old)
				vm = devCopy(t, old)
			}
			if c.vm != nil {
				c.vm(vm)
			}
			code, errs := admitVM(t, vm, old, env)
			got := []devErr{}
			for _, e := range errs {
				got = append(got, devErr{e.Type, e.Field})
			}
			want := c.errs
			if want == nil {
				want = []devErr{}
			}
			if code != c.code || !cmp.Equal(want, got) {
				t.Fatalf("code %d, errors %v\nwant code %d, errors (-want +got):\n%s", code, errs, c.code, cmp.Diff(want, got))
			}
			if c.check != nil {
				c.check(t, vm)
			}
		})
	}
}

// devJSON renders v for failure messages.
func devJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// cdromAt is a CD-ROM of its own ISO image at type:bus:unit (no placement when type is
// ""), with the schema defaults filled in.
func cdromAt(name string, t ControllerType, bus, unit int32) VirtualMachineCdromSpec {
	c := VirtualMachineCdromSpec{Name: name, Image: ImageRef{Kind: imageKindNamespaced, Name: "vmi-" + name},
		Connected: devPtr(true), AllowGuestControl: devPtr(true)}
	if t != "" {
		c.ControllerType, c.ControllerBusNumber, c.UnitNumber = t, &bus, &unit
	}
	return c
}

// cdroms gives the VM these CD-ROMs and, with guest, the guest ID they need (CD-1).
func cdroms(guest bool, cs ...VirtualMachineCdromSpec) func(*VirtualMachine) {
	return func(vm *VirtualMachine) {
		devHardware(vm).Cdrom = cs
		if guest {
			vm.Spec.GuestID = "otherLinux64Guest"
		}
	}
}
