package network

import (
	"testing"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// The primary addresses come from the guest only (api-rules §3): cloud-init's published
// ones with a CloudInit bootstrap, else guest.ipAddress, else the adapters' addresses;
// never an unspecified, link-local or multicast one.
func TestPrimaryIPs(t *testing.T) {
	cloudInit := &model.VirtualMachine{Spec: model.VirtualMachineSpec{Bootstrap: &model.VirtualMachineBootstrapSpec{CloudInit: &model.VirtualMachineBootstrapCloudInitSpec{}}}}
	plain := &model.VirtualMachine{}
	published := &types.VirtualMachineConfigInfo{ExtraConfig: []types.BaseOptionValue{
		&types.OptionValue{Key: keyLocalIPv4, Value: "10.0.0.9"}, &types.OptionValue{Key: keyLocalIPv6, Value: "fd00::9"},
	}}
	addrs := func(a ...string) []model.VirtualMachineNetworkInterfaceStatus {
		ip := &model.VirtualMachineNetworkInterfaceIPStatus{}
		for _, s := range a {
			ip.Addresses = append(ip.Addresses, model.VirtualMachineNetworkInterfaceIPAddrStatus{Address: s})
		}
		return []model.VirtualMachineNetworkInterfaceStatus{{Name: "eth0", IP: ip}}
	}
	for _, tc := range []struct {
		name     string
		vm       *model.VirtualMachine
		mvm      mo.VirtualMachine
		ifaces   []model.VirtualMachineNetworkInterfaceStatus
		ip4, ip6 string
	}{
		{name: "nothing reported", vm: plain},
		{name: "cloud-init's published addresses first", vm: cloudInit,
			mvm:    mo.VirtualMachine{Config: published, Guest: &types.GuestInfo{IpAddress: "10.0.0.5"}},
			ifaces: addrs("10.0.0.5/24", "fd00::5/64"), ip4: "10.0.0.9", ip6: "fd00::9"},
		{name: "published addresses ignored without cloud-init", vm: plain,
			mvm:    mo.VirtualMachine{Config: published, Guest: &types.GuestInfo{IpAddress: "10.0.0.5"}},
			ifaces: addrs("fd00::5/64"), ip4: "10.0.0.5", ip6: "fd00::5"},
		{name: "adapters' addresses, link-local and unspecified skipped", vm: plain,
			mvm:    mo.VirtualMachine{Guest: &types.GuestInfo{IpAddress: "0.0.0.0"}},
			ifaces: addrs("169.254.0.7/16", "fe80::1/64", "192.168.0.5/24", "2001:db8::5/64"), ip4: "192.168.0.5", ip6: "2001:db8::5"},
		{name: "a loopback address a simulated guest was given", vm: plain,
			mvm: mo.VirtualMachine{Guest: &types.GuestInfo{IpAddress: "127.0.0.3"}}, ip4: "127.0.0.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ip4, ip6 := primaryIPs(tc.mvm, tc.vm, tc.ifaces)
			if ip4 != tc.ip4 || ip6 != tc.ip6 {
				t.Errorf("primary %q, %q; want %q, %q", ip4, ip6, tc.ip4, tc.ip6)
			}
		})
	}
}
