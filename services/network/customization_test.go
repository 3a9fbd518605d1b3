package network

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// preloaded are secrets already read (nil data: absent), so the spec is built without a
// stream.
func preloaded(data map[string]map[string][]byte) *secrets {
	return &secrets{read: data}
}

// The LinuxPrep customization carries the identity (password, script and password expiry
// included), the global DNS and one adapter mapping per interface with its MAC, address,
// mask and gateway; a missing Secret is named.
func TestLinuxPrepCustomizationSpec(t *testing.T) {
	vm := &model.VirtualMachine{}
	vm.Name = "vm"
	vm.Spec.Network = &model.VirtualMachineNetworkSpec{HostName: "h", DomainName: "example.com", Nameservers: []string{"10.0.0.53", "10.0.1.53"}}
	vm.Spec.Bootstrap = &model.VirtualMachineBootstrapSpec{LinuxPrep: &model.VirtualMachineBootstrapLinuxPrepSpec{
		TimeZone: "Europe/Sofia", HardwareClockIsUTC: new(true), ExpirePasswordAfterNextLogin: true,
		Password:   &model.PasswordSecretKeySelector{Name: "root"},
		ScriptText: &model.ValueOrSecretKeySelector{From: &model.SecretKeySelector{Name: "scripts", Key: "pre"}},
	}}
	plans := []ifacePlan{
		{spec: model.VirtualMachineNetworkInterfaceSpec{Name: "eth0"}, addresses: []string{"192.168.0.50/24", "fd00::5/64"}, gateway4: "192.168.0.1"},
		{spec: model.VirtualMachineNetworkInterfaceSpec{Name: "eth1"}, dhcp4: true},
	}
	cards := []types.BaseVirtualDevice{
		&types.VirtualE1000{VirtualEthernetCard: types.VirtualEthernetCard{MacAddress: "00:50:56:00:00:01"}},
		&types.VirtualE1000{VirtualEthernetCard: types.VirtualEthernetCard{MacAddress: "00:50:56:00:00:02"}},
	}
	sec := preloaded(map[string]map[string][]byte{"root": {"password": []byte("pw")}, "scripts": {"pre": []byte("#!/bin/sh")}})
	spec, err := customizationSpec(vm, plans, cards, dnsDefaults{}, sec)
	if err != nil {
		t.Fatal(err)
	}
	want := &types.CustomizationSpec{
		Identity: &types.CustomizationLinuxPrep{
			HostName: &types.CustomizationFixedName{Name: "h"}, Domain: "example.com", TimeZone: "Europe/Sofia",
			HwClockUTC: new(true), Password: &types.CustomizationPassword{Value: "pw", PlainText: true},
			ResetPassword: new(true), ScriptText: "#!/bin/sh",
		},
		GlobalIPSettings: types.CustomizationGlobalIPSettings{DnsServerList: []string{"10.0.0.53", "10.0.1.53"}},
		NicSettingMap: []types.CustomizationAdapterMapping{
			{MacAddress: "00:50:56:00:00:01", Adapter: types.CustomizationIPSettings{
				Ip: &types.CustomizationFixedIp{IpAddress: "192.168.0.50"}, SubnetMask: "255.255.255.0", Gateway: []string{"192.168.0.1"},
				IpV6Spec: &types.CustomizationIPSettingsIpV6AddressSpec{Ip: []types.BaseCustomizationIpV6Generator{&types.CustomizationFixedIpV6{IpAddress: "fd00::5", SubnetMask: 64}}},
			}},
			{MacAddress: "00:50:56:00:00:02", Adapter: types.CustomizationIPSettings{Ip: &types.CustomizationDhcpIpGenerator{}}},
		},
	}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}

	_, err = customizationSpec(vm, plans, cards, dnsDefaults{}, preloaded(map[string]map[string][]byte{"root": {"password": []byte("pw")}, "scripts": nil}))
	if !isMissingSecret(err) || err.Error() != `the script text: secret "scripts" not found` {
		t.Errorf("missing script secret: %v", err)
	}
}

// Sysprep maps the answer file's parts and joins the domain of spec.network.domainName.
func TestSysprepCustomizationSpec(t *testing.T) {
	vm := &model.VirtualMachine{}
	vm.Name = "win"
	vm.Spec.Network = &model.VirtualMachineNetworkSpec{DomainName: "corp.example.com"}
	vm.Spec.Bootstrap = &model.VirtualMachineBootstrapSpec{Sysprep: &model.VirtualMachineBootstrapSysprepSpec{Sysprep: &model.Sysprep{
		GUIUnattended:        &model.SysprepGUIUnattended{AutoLogon: true, AutoLogonCount: 2, TimeZone: 4, Password: &model.PasswordSecretKeySelector{Name: "admin"}},
		UserData:             model.SysprepUserData{FullName: "J Doe", OrgName: "Org", ProductID: &model.ProductIDSecretKeySelector{Name: "key"}},
		Identification:       &model.SysprepIdentification{DomainAdmin: "adm", DomainAdminPassword: &model.DomainPasswordSecretKeySelector{Name: "join"}, DomainOU: "OU=x"},
		LicenseFilePrintData: &model.SysprepLicenseFilePrintData{AutoMode: "perServer", AutoUsers: new(int32(5))},
		GUIRunOnce:           &model.SysprepGUIRunOnce{Commands: []string{"cmd /c echo"}},
	}}}
	sec := preloaded(map[string]map[string][]byte{
		"admin": {"password": []byte("a")}, "key": {"product_id": []byte("AAAA")}, "join": {"domain_admin_password": []byte("j")},
	})
	spec, err := customizationSpec(vm, nil, nil, dnsDefaults{}, sec)
	if err != nil {
		t.Fatal(err)
	}
	want := &types.CustomizationSysprep{
		GuiUnattended: types.CustomizationGuiUnattended{Password: &types.CustomizationPassword{Value: "a", PlainText: true}, TimeZone: 4, AutoLogon: true, AutoLogonCount: 2},
		UserData:      types.CustomizationUserData{FullName: "J Doe", OrgName: "Org", ComputerName: &types.CustomizationFixedName{Name: "win"}, ProductId: "AAAA"},
		GuiRunOnce:    &types.CustomizationGuiRunOnce{CommandList: []string{"cmd /c echo"}},
		Identification: types.CustomizationIdentification{JoinDomain: "corp.example.com", DomainAdmin: "adm", DomainOU: "OU=x",
			DomainAdminPassword: &types.CustomizationPassword{Value: "j", PlainText: true}},
		LicenseFilePrintData: &types.CustomizationLicenseFilePrintData{AutoMode: "perServer", AutoUsers: 5},
	}
	if diff := cmp.Diff(want, spec.Identity); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}
}
