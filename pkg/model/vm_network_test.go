package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestNetworkRules(t *testing.T) {
	invalid, unsupported := field.ErrorTypeInvalid, field.ErrorTypeNotSupported
	ifc0 := "spec.network.interfaces[0]"
	linuxPrep := func(vm *VirtualMachine) {
		vm.Spec.Bootstrap = &VirtualMachineBootstrapSpec{LinuxPrep: &VirtualMachineBootstrapLinuxPrepSpec{}}
	}
	cloudInit := func(vm *VirtualMachine) {
		vm.Spec.Bootstrap = &VirtualMachineBootstrapSpec{CloudInit: &VirtualMachineBootstrapCloudInitSpec{}}
	}
	sysprep := func(vm *VirtualMachine) {
		vm.Spec.Bootstrap = &VirtualMachineBootstrapSpec{Sysprep: &VirtualMachineBootstrapSysprepSpec{
			RawSysprep: &SecretKeySelector{Name: "unattend", Key: "xml"}}}
	}
	// iface gives the VM one interface eth0 changed by change, after applying setup.
	iface := func(change func(*VirtualMachineNetworkInterfaceSpec), setup ...func(*VirtualMachine)) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			for _, s := range setup {
				s(vm)
			}
			ifc := VirtualMachineNetworkInterfaceSpec{Name: "eth0"}
			change(&ifc)
			devNetwork(vm).Interfaces = []VirtualMachineNetworkInterfaceSpec{ifc}
		}
	}
	provider := func(p string) func(*VMEnv) { return func(env *VMEnv) { env.Namespace.NetworkProvider = p } }
	globalDNS := func(ns, sd []string, setup func(*VirtualMachine)) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			setup(vm)
			devNetwork(vm).Nameservers, devNetwork(vm).SearchDomains = ns, sd
		}
	}
	noFlag := func(flag string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			cloudInit(vm)
			if flag == "ns" {
				vm.Spec.Bootstrap.CloudInit.UseGlobalNameserversAsDefault = devPtr(false)
			} else {
				vm.Spec.Bootstrap.CloudInit.UseGlobalSearchDomainsAsDefault = devPtr(false)
			}
		}
	}
	runDevCases(t, []devCase{
		{name: "NET-1 IP nameserver accepted", vm: globalDNS([]string{"10.0.0.2", "fd00::53"}, nil, linuxPrep), code: 200},
		{name: "NET-1 nameserver that is no IP", vm: globalDNS([]string{"dns.example.com"}, nil, linuxPrep), code: 422,
			errs: []devErr{{invalid, "spec.network.nameservers[0]"}}},
		{name: "NET-2 global nameservers with CloudInit", vm: globalDNS([]string{"10.0.0.2"}, nil, cloudInit), code: 200},
		{name: "NET-2 global nameservers with Sysprep", vm: globalDNS([]string{"10.0.0.2"}, nil, sysprep), code: 200},
		{name: "NET-2 global nameservers without bootstrap", vm: globalDNS([]string{"10.0.0.2"}, nil, func(*VirtualMachine) {}), code: 422,
			errs: []devErr{{invalid, "spec.network.nameservers"}}},
		{name: "NET-2 global nameservers with CloudInit not using them", vm: globalDNS([]string{"10.0.0.2"}, nil, noFlag("ns")), code: 422,
			errs: []devErr{{invalid, "spec.network.nameservers"}}},
		{name: "NET-3 global search domains with LinuxPrep", vm: globalDNS(nil, []string{"example.com"}, linuxPrep), code: 200},
		{name: "NET-3 global search domains with CloudInit not using them", vm: globalDNS(nil, []string{"example.com"}, noFlag("sd")), code: 422,
			errs: []devErr{{invalid, "spec.network.searchDomains"}}},
		{name: "NET-4 guestDeviceName, mtu, routes, DNS with CloudInit", code: 200, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.GuestDeviceName, i.MTU = "ens192", devPtr(int64(9000))
			i.Routes = []VirtualMachineNetworkRouteSpec{{To: "default", Via: "10.0.0.1"}}
			i.Addresses = []string{"10.0.0.10/24"}
			i.Nameservers, i.SearchDomains = []string{"10.0.0.2"}, []string{"example.com"}
		}, cloudInit)},
		{name: "NET-4 per-interface nameservers with Sysprep", code: 200,
			vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Nameservers = []string{"10.0.0.2"} }, sysprep)},
		{name: "NET-4 CloudInit-only interface settings with LinuxPrep", code: 422, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.GuestDeviceName, i.MTU = "ens192", devPtr(int64(9000))
			i.Routes = []VirtualMachineNetworkRouteSpec{{To: "default", Via: "10.0.0.1"}}
			i.Addresses = []string{"10.0.0.10/24"}
			i.Nameservers, i.SearchDomains = []string{"10.0.0.2"}, []string{"example.com"}
		}, linuxPrep), errs: []devErr{
			{invalid, ifc0 + ".guestDeviceName"}, {invalid, ifc0 + ".mtu"}, {invalid, ifc0 + ".routes"},
			{invalid, ifc0 + ".nameservers"}, {invalid, ifc0 + ".searchDomains"}}},
		{name: "NET-5 address with prefix length", code: 200,
			vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Addresses = []string{"10.0.0.10/24", "fd00::10/64"} })},
		{name: "NET-5 address without prefix length", code: 422,
			vm:   iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Addresses = []string{"10.0.0.10"} }),
			errs: []devErr{{invalid, ifc0 + ".addresses[0]"}}},
		{name: "NET-6 gateway4 with an IPv4 address", code: 200, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Addresses, i.Gateway4 = []string{"10.0.0.10/24"}, "10.0.0.1"
		})},
		{name: "NET-6 gateway4 None without addresses", code: 200,
			vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Gateway4 = "None" })},
		{name: "NET-6 gateway4 without an IPv4 address", code: 422,
			vm:   iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Gateway4 = "10.0.0.1" }),
			errs: []devErr{{invalid, ifc0 + ".gateway4"}}},
		{name: "NET-6 gateway4 that is no IPv4 address", code: 422, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Addresses, i.Gateway4 = []string{"10.0.0.10/24"}, "fd00::1"
		}), errs: []devErr{{invalid, ifc0 + ".gateway4"}}},
		{name: "NET-7 gateway6 with an IPv6 address", code: 200, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Addresses, i.Gateway6 = []string{"fd00::10/64"}, "fd00::1"
		})},
		{name: "NET-7 gateway6 that is no IPv6 address and has no IPv6 address", code: 422, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Addresses, i.Gateway6 = []string{"10.0.0.10/24"}, "10.0.0.1"
		}), errs: []devErr{{invalid, ifc0 + ".gateway6"}, {invalid, ifc0 + ".gateway6"}}},
		{name: "NET-8 dhcp4 alone", code: 200,
			vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.DHCP4, i.Addresses = true, []string{"fd00::10/64"} })},
		{name: "NET-8 dhcp4 with IPv4 address", code: 422,
			vm:   iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.DHCP4, i.Addresses = true, []string{"10.0.0.10/24"} }),
			errs: []devErr{{invalid, ifc0 + ".dhcp4"}}},
		{name: "NET-8 dhcp4 with gateway4 None", code: 422,
			vm:   iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.DHCP4, i.Gateway4 = true, "None" }),
			errs: []devErr{{invalid, ifc0 + ".gateway4"}}},
		{name: "NET-9 dhcp6 alone", code: 200,
			vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.DHCP6, i.Addresses = true, []string{"10.0.0.10/24"} })},
		{name: "NET-9 dhcp6 with IPv6 address and gateway6", code: 422, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.DHCP6, i.Addresses, i.Gateway6 = true, []string{"fd00::10/64"}, "fd00::1"
		}), errs: []devErr{{invalid, ifc0 + ".dhcp6"}, {invalid, ifc0 + ".gateway6"}}},
		{name: "NET-10 per-interface IP nameserver", code: 200,
			vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Nameservers = []string{"8.8.8.8"} }, cloudInit)},
		{name: "NET-10 per-interface nameserver that is no IP", code: 422,
			vm:   iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Nameservers = []string{"8.8.8.8", "dns"} }, cloudInit),
			errs: []devErr{{invalid, ifc0 + ".nameservers[1]"}}},
		{name: "NET-11 default and prefix routes", code: 200, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Routes = []VirtualMachineNetworkRouteSpec{{To: "default", Via: "10.0.0.1"}, {To: "fd01::/64", Via: "fd00::1", Metric: 5}}
		}, cloudInit)},
		{name: "NET-11 bad to, bad via, mixed families", code: 422, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Routes = []VirtualMachineNetworkRouteSpec{{To: "somewhere", Via: "10.0.0.1"}, {To: "default", Via: "gw"}, {To: "10.1.0.0/16", Via: "fd00::1"}}
		}, cloudInit), errs: []devErr{{invalid, ifc0 + ".routes[0].to"}, {invalid, ifc0 + ".routes[1].via"}, {invalid, ifc0 + ".routes[2]"}}},
		{name: "NET-12 composed name with the network's name", env: provider(NetworkProviderVDS), code: 200,
			vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Network = &PartialObjectRef{Name: "primary"} })},
		{name: "NET-12 Named provider network names are not part of the composed name", code: 200,
			vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Network = &PartialObjectRef{Name: "VM Network"} })},
		{name: "NET-12 composed name that is no DNS subdomain", env: provider(NetworkProviderVDS), code: 422,
			vm:   iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.Network = &PartialObjectRef{Name: "Primary_Net"} }),
			errs: []devErr{{invalid, ifc0 + ".name"}}},
		{name: "NET-13 MAC address on a VPC network", env: provider(NetworkProviderVPC), code: 200,
			vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.MACAddr = "00:50:56:aa:bb:cc" })},
		{name: "NET-13 MAC address on a VDS network", env: provider(NetworkProviderVDS), code: 422,
			vm:   iface(func(i *VirtualMachineNetworkInterfaceSpec) { i.MACAddr = "00:50:56:aa:bb:cc" }),
			errs: []devErr{{invalid, ifc0 + ".macAddr"}}},
		{name: "NET-14a the provider's own group", env: provider(NetworkProviderVDS), code: 200, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Network = &PartialObjectRef{APIVersion: "netoperator.vmware.com/v1alpha2", Kind: "Network", Name: "primary"}
		})},
		{name: "NET-14a unparseable apiVersion", env: provider(NetworkProviderVDS), code: 422, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Network = &PartialObjectRef{APIVersion: "a/b/c", Kind: "Network"}
		}), errs: []devErr{{invalid, ifc0 + ".network.apiVersion"}}},
		{name: "NET-14a group of another provider", env: provider(NetworkProviderVDS), code: 422, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Network = &PartialObjectRef{APIVersion: "vmware.com/v1alpha1", Kind: "VirtualNetwork"}
		}), errs: []devErr{{unsupported, ifc0 + ".network.apiVersion"}}},
		{name: "NET-14a Named providers skip the check", code: 200, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Network = &PartialObjectRef{APIVersion: "a/b/c", Kind: "Anything", Name: "VM Network"}
		})},
		{name: "NET-14b VPC Subnet", env: provider(NetworkProviderVPC), code: 200, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Network = &PartialObjectRef{Kind: "Subnet", Name: "subnet-a"}
		})},
		{name: "NET-14b kind the provider does not serve", env: provider(NetworkProviderVPC), code: 422, vm: iface(func(i *VirtualMachineNetworkInterfaceSpec) {
			i.Network = &PartialObjectRef{Kind: "Network"}
		}), errs: []devErr{{unsupported, ifc0 + ".network.kind"}}},
	})
}

func TestNetworkImmutableRules(t *testing.T) {
	invalid, forbidden := field.ErrorTypeInvalid, field.ErrorTypeForbidden
	ifc0 := "spec.network.interfaces[0]"
	stored := func(vm *VirtualMachine) {
		n := devNetwork(vm)
		n.HostName = "web"
		n.Interfaces[0].Addresses = []string{"10.0.0.10/24"}
	}
	failedOver := func(vm *VirtualMachine) {
		stored(vm)
		vm.Annotations[annotationFailedOverVM] = "true"
	}
	vpc := func(env *VMEnv) { env.Namespace.NetworkProvider = NetworkProviderVPC }
	withMAC := func(vm *VirtualMachine) {
		stored(vm)
		vm.Spec.Network.Interfaces[0].Network = &PartialObjectRef{APIVersion: "crd.nsx.vmware.com/v1alpha1", Kind: "SubnetSet"}
		vm.Spec.Network.Interfaces[0].MACAddr = "00:50:56:aa:bb:cc"
	}
	runDevCases(t, []devCase{
		{name: "NET-15 unchanged interfaces, disabled toggled", old: stored, code: 200,
			vm: func(vm *VirtualMachine) { vm.Spec.Network.Disabled = true }},
		{name: "NET-15 interface added", old: stored, code: 422,
			vm: func(vm *VirtualMachine) {
				vm.Spec.Network.Interfaces = append(vm.Spec.Network.Interfaces, VirtualMachineNetworkInterfaceSpec{Name: "eth1"})
			},
			errs: []devErr{{forbidden, "spec.network.interfaces"}}},
		{name: "NET-16 interface renamed and moved", old: stored, code: 422,
			vm: func(vm *VirtualMachine) {
				vm.Spec.Network.Interfaces[0].Name = "eth1"
				vm.Spec.Network.Interfaces[0].Network.Name = "Other Network"
			},
			errs: []devErr{{forbidden, ifc0 + ".name"}, {forbidden, ifc0 + ".network"}}},
		{name: "NET-16 failed-over VM may move its interfaces", old: failedOver, env: privileged, code: 200,
			vm: func(vm *VirtualMachine) { vm.Spec.Network.Interfaces[0].Network.Name = "Recovery Network" }},
		{name: "NET-17 MAC address kept", old: withMAC, env: vpc, code: 200,
			vm: func(vm *VirtualMachine) { vm.Spec.Network.Disabled = true }},
		{name: "NET-17 MAC address changed", old: withMAC, env: vpc, code: 422,
			vm:   func(vm *VirtualMachine) { vm.Spec.Network.Interfaces[0].MACAddr = "00:50:56:aa:bb:dd" },
			errs: []devErr{{invalid, ifc0 + ".macAddr"}}},
		{name: "NET-18 disabled may change", old: stored, code: 200,
			vm: func(vm *VirtualMachine) { vm.Spec.Network.Disabled = true }},
		{name: "NET-18 host name and addresses changed", old: stored, code: 422,
			vm: func(vm *VirtualMachine) {
				vm.Spec.Network.HostName = "db"
				vm.Spec.Network.Interfaces[0].Addresses = []string{"10.0.0.11/24"}
			},
			errs: []devErr{{forbidden, "spec.network.hostName"}, {forbidden, ifc0 + ".addresses"}}},
	})
}
