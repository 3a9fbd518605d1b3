package api_test

import (
	"net/http"
	"strings"
	"testing"
)

const (
	vms    = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachines"
	images = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachineimages"
)

const photonImage = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineImage
metadata:
  name: vmi-0a0044d7c690bcbea
status:
  name: photon-5
`

const minimalVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: my-vm
spec:
  className: my-vm-class
  imageName: photon-5
  storageClass: my-storage-class
`

// Creating a VirtualMachine runs the create defaults: schema defaults, power state,
// UUIDs, the default NIC, IDE controllers and image resolution by display name.
func TestVirtualMachineCreateDefaults(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	imageInventory(t, g)
	body := createMinimalVM(t, g)
	vm := decode(t, body)
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"spec", "powerState"}, "PoweredOn"},
		{[]string{"spec", "powerOffMode"}, "TrySoft"},
		{[]string{"spec", "restartMode"}, "TrySoft"},
		{[]string{"spec", "image", "name"}, "vmi-0a0044d7c690bcbea"},
		{[]string{"spec", "image", "kind"}, "VirtualMachineImage"},
	}
	for _, c := range checks {
		if got := field(vm, c.path...); got != c.want {
			t.Errorf("%s = %v, want %v", strings.Join(c.path, "."), got, c.want)
		}
	}
	if ifs, _ := field(vm, "spec", "network", "interfaces").([]any); len(ifs) != 1 || field(ifs[0].(map[string]any), "name") != "eth0" {
		t.Errorf("interfaces = %v, want one eth0", ifs)
	}
	if ide, _ := field(vm, "spec", "hardware", "ideControllers").([]any); len(ide) != 2 {
		t.Errorf("ideControllers = %v, want two", ide)
	}
	for _, f := range []string{"biosUUID", "instanceUUID"} {
		if s, _ := field(vm, "spec", f).(string); len(s) != 36 {
			t.Errorf("spec.%s = %q, want a UUID", f, s)
		}
	}
}

func TestVirtualMachineCreateDenials(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	tests := []struct {
		name, body, token string
		wantCode          int
		wantMessage       string
	}{
		{"D9 unknown image", strings.Replace(minimalVM, "photon-5", "vmi-does-not-exist", 1), userToken,
			http.StatusForbidden, `spec.imageName: Not found: "vmi-does-not-exist"`},
		{"D8 non-privileged BIOS UUID", strings.Replace(minimalVM, "  imageName: photon-5\n", "  biosUUID: 1b1e1a2c-4e59-4b7b-a9f1-0f6b5a0c9d11\n", 1),
			userToken, http.StatusForbidden, "spec.biosUUID: Forbidden"},
		{"schema enum", strings.Replace(minimalVM, "  imageName: photon-5\n", "  powerState: Sleeping\n", 1), userToken,
			http.StatusUnprocessableEntity, `spec.powerState: Unsupported value: "Sleeping"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := g.do("POST", vms, tt.token, tt.body, "Content-Type", "application/yaml")
			if msg, _ := decode(t, body)["message"].(string); code != tt.wantCode || !strings.Contains(msg, tt.wantMessage) {
				t.Errorf("got %d %s, want %d with %q", code, body, tt.wantCode, tt.wantMessage)
			}
		})
	}
}
