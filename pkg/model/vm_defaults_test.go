package model

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func counterUUIDs() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
}

var testImages = struct{ ns, cluster []ImageInfo }{
	ns: []ImageInfo{
		{Kind: "VirtualMachineImage", Name: "vmi-0a0044d7c690bcbea", DisplayName: "photon-5"},
		{Kind: "VirtualMachineImage", Name: "vmi-1111", DisplayName: "twin"},
		{Kind: "VirtualMachineImage", Name: "vmi-2222", DisplayName: "twin"},
		{Kind: "VirtualMachineImage", Name: "vmi-3333", DisplayName: "both-scopes"},
	},
	cluster: []ImageInfo{
		{Kind: "ClusterVirtualMachineImage", Name: "vmi-cccc", DisplayName: "ubuntu-24.04"},
		{Kind: "ClusterVirtualMachineImage", Name: "vmi-dddd", DisplayName: "both-scopes"},
	},
}

func TestResolveImageName(t *testing.T) {
	tests := []struct {
		name, value string
		want        ImageInfo
		wantErr     field.ErrorType
	}{
		{"D9 object name in namespace", "vmi-0a0044d7c690bcbea", testImages.ns[0], ""},
		{"D9 object name in cluster", "vmi-cccc", testImages.cluster[0], ""},
		{"D9 display name, one match", "photon-5", testImages.ns[0], ""},
		{"D9 display name in cluster", "ubuntu-24.04", testImages.cluster[0], ""},
		{"D9 unknown object name", "vmi-9999", ImageInfo{}, field.ErrorTypeNotFound},
		{"D9 unknown display name", "windows", ImageInfo{}, field.ErrorTypeNotFound},
		{"D9 ambiguous in namespace", "twin", ImageInfo{}, field.ErrorTypeInvalid},
		{"D9 ambiguous across scopes", "both-scopes", ImageInfo{}, field.ErrorTypeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveImageName(tt.value, testImages.ns, testImages.cluster)
			if tt.wantErr != "" {
				if err == nil || err.Type != tt.wantErr || err.Field != "spec.imageName" {
					t.Fatalf("err = %v, want %s at spec.imageName", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDefaultVirtualMachine(t *testing.T) {
	env := func(privileged bool) VMEnv {
		return VMEnv{Privileged: privileged, BuildVersion: "v-test", Namespace: NamespaceSettings{DefaultNetwork: "VM Network"},
			Lookup: &fakeLookup{nsImages: testImages.ns, clusterImages: testImages.cluster}, NewUUID: counterUUIDs()}
	}
	t.Run("D2 D3 D4 D7 D8 D9 D13 on a minimal VM", func(t *testing.T) {
		vm := VirtualMachine{Spec: VirtualMachineSpec{ClassName: "c", ImageName: "photon-5",
			Bootstrap: &VirtualMachineBootstrapSpec{CloudInit: &VirtualMachineBootstrapCloudInitSpec{}}}}
		if err := DefaultVirtualMachine(&vm, nil, env(false)); err != nil {
			t.Fatal(err)
		}
		want := VirtualMachineSpec{
			ClassName: "c", ImageName: "photon-5",
			Image:        &ImageRef{Kind: "VirtualMachineImage", Name: "vmi-0a0044d7c690bcbea"},
			PowerState:   PowerStateOn,
			InstanceUUID: "00000000-0000-4000-8000-000000000001",
			BiosUUID:     "00000000-0000-4000-8000-000000000002",
			Bootstrap: &VirtualMachineBootstrapSpec{CloudInit: &VirtualMachineBootstrapCloudInitSpec{
				InstanceID: "00000000-0000-4000-8000-000000000002"}},
			Network: &VirtualMachineNetworkSpec{Interfaces: []VirtualMachineNetworkInterfaceSpec{
				{Name: "eth0", Network: &PartialObjectRef{Name: "VM Network"}}}},
			Hardware: &VirtualMachineHardwareSpec{IDEControllers: []IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}}},
		}
		if diff := cmp.Diff(want, vm.Spec); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
		if vm.Annotations[AnnotationCreatedAtBuild] != "v-test" || vm.Annotations[AnnotationCreatedAtSchema] != SchemaVersion {
			t.Errorf("D2 annotations = %v", vm.Annotations)
		}
	})
	t.Run("D3 no default NIC when networking is disabled or suppressed", func(t *testing.T) {
		disabled := VirtualMachine{Spec: VirtualMachineSpec{Network: &VirtualMachineNetworkSpec{Disabled: true}}}
		suppressed := VirtualMachine{}
		suppressed.Annotations = map[string]string{AnnotationNoDefaultNIC: ""}
		for _, vm := range []*VirtualMachine{&disabled, &suppressed} {
			if err := DefaultVirtualMachine(vm, nil, env(false)); err != nil {
				t.Fatal(err)
			}
			if vm.Spec.Network != nil && len(vm.Spec.Network.Interfaces) > 0 {
				t.Errorf("interfaces = %+v, want none", vm.Spec.Network.Interfaces)
			}
		}
	})
	t.Run("D3 fills the network of given interfaces", func(t *testing.T) {
		vm := VirtualMachine{Spec: VirtualMachineSpec{Network: &VirtualMachineNetworkSpec{
			Interfaces: []VirtualMachineNetworkInterfaceSpec{{Name: "eth1"}}}}}
		e := env(false)
		e.Namespace.NetworkProvider = NetworkProviderVDS
		if err := DefaultVirtualMachine(&vm, nil, e); err != nil {
			t.Fatal(err)
		}
		want := &PartialObjectRef{APIVersion: "netoperator.vmware.com/v1alpha1", Kind: "Network"}
		if diff := cmp.Diff(want, vm.Spec.Network.Interfaces[0].Network); diff != "" {
			t.Errorf("network ref (-want +got):\n%s", diff)
		}
	})
	t.Run("D7 D8 non-privileged UUIDs are denied, privileged kept", func(t *testing.T) {
		for _, f := range []string{"instanceUUID", "biosUUID"} {
			vm := VirtualMachine{}
			if f == "instanceUUID" {
				vm.Spec.InstanceUUID = "00000000-0000-4000-8000-00000000abcd"
			} else {
				vm.Spec.BiosUUID = "00000000-0000-4000-8000-00000000abcd"
			}
			err := DefaultVirtualMachine(&vm, nil, env(false))
			if err == nil || err.Type != field.ErrorTypeForbidden || err.Field != "spec."+f {
				t.Errorf("%s by a non-privileged user: err = %v, want Forbidden", f, err)
			}
			if err := DefaultVirtualMachine(&vm, nil, env(true)); err != nil {
				t.Errorf("%s by a privileged user: %v", f, err)
			}
		}
	})
	t.Run("D9 image naming another image is denied", func(t *testing.T) {
		vm := VirtualMachine{Spec: VirtualMachineSpec{ImageName: "photon-5", Image: &ImageRef{Kind: "VirtualMachineImage", Name: "vmi-1111"}}}
		if err := DefaultVirtualMachine(&vm, nil, env(false)); err == nil || err.Type != field.ErrorTypeInvalid {
			t.Errorf("err = %v, want Invalid", err)
		}
	})
	t.Run("D13 keeps given IDE controllers", func(t *testing.T) {
		vm := VirtualMachine{Spec: VirtualMachineSpec{Hardware: &VirtualMachineHardwareSpec{IDEControllers: []IDEControllerSpec{{BusNumber: 1}}}}}
		if err := DefaultVirtualMachine(&vm, nil, env(false)); err != nil {
			t.Fatal(err)
		}
		if len(vm.Spec.Hardware.IDEControllers) != 1 {
			t.Errorf("IDE controllers = %+v, want the one given", vm.Spec.Hardware.IDEControllers)
		}
	})
}
