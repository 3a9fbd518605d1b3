package network

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

func TestExpandVApp(t *testing.T) {
	vm := &model.VirtualMachine{}
	vm.Spec.Network = &model.VirtualMachineNetworkSpec{Nameservers: []string{"10.0.0.53", "10.0.1.53"}}
	plans := []ifacePlan{{addresses: []string{"192.168.0.50/24"}, gateway4: "192.168.0.1"}}
	cards := []types.BaseVirtualDevice{&types.VirtualE1000{VirtualEthernetCard: types.VirtualEthernetCard{MacAddress: "00:50:56:00:00:01"}}}
	got, err := expandVApp(map[string]string{
		"plain": "as is",
		"ip":    "{{ V1alpha5_IP V1alpha5_FirstIP }}",
		"mask":  "{{ V1alpha5_SubnetMask (V1alpha5_FirstIPFromNIC 0) }}",
		"cidr":  `{{ V1alpha5_FormatIP "192.168.0.50" "255.255.255.0" }}`,
		"gw":    "{{ (index .V1alpha5.Net.Devices 0).Gateway4 }}",
		"mac":   "{{ V1alpha5_FirstNicMacAddr }}",
		"dns":   `{{ V1alpha5_FormatNameservers 1 "," }}|{{ V1alpha5_FormatNameservers -1 " " }}`,
	}, vm, plans, cards, dnsDefaults{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"plain": "as is", "ip": "192.168.0.50", "mask": "255.255.255.0", "cidr": "192.168.0.50/24",
		"gw": "192.168.0.1", "mac": "00:50:56:00:00:01", "dns": "10.0.0.53|10.0.0.53 10.0.1.53",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("expanded (-want +got):\n%s", diff)
	}
	if _, err := expandVApp(map[string]string{"bad": "{{ .V1alpha5.Nope }}"}, vm, plans, cards, dnsDefaults{}); err == nil {
		t.Error("a template over an unknown field rendered")
	}
}

// A value from a Secret that is not a template that renders is refused without quoting
// it: the template's error would put part of the secret into the condition and its event.
func TestExpandVAppKeepsSecretValuesOutOfErrors(t *testing.T) {
	secret := "S3cr{{et}}Pw"
	for _, va := range []*model.VirtualMachineBootstrapVAppConfigSpec{
		{RawProperties: "vapp-secret"},
		{Properties: []model.KeyValueOrSecretKeySelectorPair{{Key: "password", Value: &model.ValueOrSecretKeySelector{
			From: &model.SecretKeySelector{Name: "vapp-secret", Key: "password"}}}}},
	} {
		vm := &model.VirtualMachine{}
		vm.Spec.Bootstrap = &model.VirtualMachineBootstrapSpec{VAppConfig: va}
		_, err := expandVApp(map[string]string{"password": secret}, vm, nil, nil, dnsDefaults{})
		if err == nil || strings.Contains(err.Error(), `"et"`) {
			t.Errorf("expanding a Secret's value %q: %v; want an error that does not quote it", secret, err)
		}
	}
	inline := &model.VirtualMachine{}
	if _, err := expandVApp(map[string]string{"note": "{{et}}"}, inline, nil, nil, dnsDefaults{}); err == nil || !strings.Contains(err.Error(), `function "et" not defined`) {
		t.Errorf("expanding an inline value: %v; want the template's own error", err)
	}
}
