package model

import (
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var networkPath = specPath.Child("network")

// providerNetworkKinds are the network kinds each provider type with a fixed ref serves
// (NET-14b); the ref's apiVersion is the one D3 fills in.
var providerNetworkKinds = map[string][]string{
	NetworkProviderVDS:  {"Network"},
	NetworkProviderNSXT: {"VirtualNetwork"},
	NetworkProviderVPC:  {"Subnet", "SubnetSet"},
}

// vpcNetworkGroup is the API group of VPC networks, the only ones that take a MAC address.
const vpcNetworkGroup = "crd.nsx.vmware.com"

// validateNetwork is NET-1..14b: global DNS settings and each interface's addresses,
// gateways, DHCP, routes, composed name, MAC and network ref, with the bootstrap
// providers that can apply them (api-rules §7.6, §11 #6, #7).
func validateNetwork(r *vmReq) field.ErrorList {
	n := r.New.Spec.Network
	if n == nil {
		return nil
	}
	boot := bootstrapOf(r.New)
	var errs field.ErrorList
	for i, s := range n.Nameservers {
		if !isIP(s) {
			errs = append(errs, field.Invalid(networkPath.Child("nameservers").Index(i), s, "must be an IPv4 or IPv6 address"))
		}
	}
	if len(n.Nameservers) > 0 && !boot.globalDNS(func(c *VirtualMachineBootstrapCloudInitSpec) *bool { return c.UseGlobalNameserversAsDefault }) {
		errs = append(errs, field.Invalid(networkPath.Child("nameservers"), strings.Join(n.Nameservers, ","),
			"global nameservers need the LinuxPrep or Sysprep bootstrap, or CloudInit with useGlobalNameserversAsDefault not false"))
	}
	if len(n.SearchDomains) > 0 && !boot.globalDNS(func(c *VirtualMachineBootstrapCloudInitSpec) *bool { return c.UseGlobalSearchDomainsAsDefault }) {
		errs = append(errs, field.Invalid(networkPath.Child("searchDomains"), strings.Join(n.SearchDomains, ","),
			"global search domains need the LinuxPrep or Sysprep bootstrap, or CloudInit with useGlobalSearchDomainsAsDefault not false"))
	}
	for i := range n.Interfaces {
		p := networkPath.Child("interfaces").Index(i)
		ifc := &n.Interfaces[i]
		errs = append(errs, interfaceBootstrapErrors(ifc, p, boot)...)
		errs = append(errs, interfaceIPErrors(ifc, p)...)
		errs = append(errs, interfaceRefErrors(r.New.Name, ifc, p, r.Env.Namespace.NetworkProvider)...)
	}
	return errs
}

// bootstrapProviders says which bootstrap providers a VM uses.
type bootstrapProviders struct {
	cloudInit          *VirtualMachineBootstrapCloudInitSpec
	linuxPrep, sysprep bool
}

func bootstrapOf(vm *VirtualMachine) bootstrapProviders {
	b := vm.Spec.Bootstrap
	if b == nil {
		return bootstrapProviders{}
	}
	return bootstrapProviders{cloudInit: b.CloudInit, linuxPrep: b.LinuxPrep != nil, sysprep: b.Sysprep != nil}
}

// globalDNS is NET-2/3's condition: LinuxPrep or Sysprep apply global DNS settings, and so
// does CloudInit unless the flag (unset means true) turns them off.
func (b bootstrapProviders) globalDNS(flag func(*VirtualMachineBootstrapCloudInitSpec) *bool) bool {
	if b.linuxPrep || b.sysprep {
		return true
	}
	return b.cloudInit != nil && (flag(b.cloudInit) == nil || *flag(b.cloudInit))
}

// interfaceBootstrapErrors is NET-4: per-interface settings only some providers apply.
func interfaceBootstrapErrors(ifc *VirtualMachineNetworkInterfaceSpec, p *field.Path, boot bootstrapProviders) field.ErrorList {
	if boot.cloudInit != nil {
		return nil
	}
	const needsCloudInit = "needs the CloudInit bootstrap"
	var errs field.ErrorList
	if ifc.GuestDeviceName != "" {
		errs = append(errs, field.Invalid(p.Child("guestDeviceName"), ifc.GuestDeviceName, "guestDeviceName "+needsCloudInit))
	}
	if ifc.MTU != nil {
		errs = append(errs, field.Invalid(p.Child("mtu"), *ifc.MTU, "mtu "+needsCloudInit))
	}
	if len(ifc.Routes) > 0 {
		errs = append(errs, field.Invalid(p.Child("routes"), "routes", "routes "+needsCloudInit))
	}
	if len(ifc.Nameservers) > 0 && !boot.sysprep {
		errs = append(errs, field.Invalid(p.Child("nameservers"), strings.Join(ifc.Nameservers, ","),
			"per-interface nameservers need the CloudInit or Sysprep bootstrap"))
	}
	if len(ifc.SearchDomains) > 0 {
		errs = append(errs, field.Invalid(p.Child("searchDomains"), strings.Join(ifc.SearchDomains, ","),
			"per-interface search domains "+needsCloudInit))
	}
	return errs
}

// interfaceIPErrors is NET-5..11: addresses, gateways, DHCP, nameservers and routes.
func interfaceIPErrors(ifc *VirtualMachineNetworkInterfaceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var v4, v6 []string
	for j, a := range ifc.Addresses {
		prefix, err := netip.ParsePrefix(a)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child("addresses").Index(j), a, "must be an IP address with a prefix length, e.g. 10.0.0.10/24"))
		case isIPv4(prefix.Addr()):
			v4 = append(v4, a)
		default:
			v6 = append(v6, a)
		}
	}
	errs = append(errs, gatewayErrors(p.Child("gateway4"), ifc.Gateway4, v4, "IPv4", isIPv4)...)
	errs = append(errs, gatewayErrors(p.Child("gateway6"), ifc.Gateway6, v6, "IPv6", isIPv6)...)
	if ifc.DHCP4 {
		errs = append(errs, dhcpErrors(p.Child("dhcp4"), p.Child("gateway4"), ifc.Gateway4, v4, "dhcp4", "IPv4")...)
	}
	if ifc.DHCP6 {
		errs = append(errs, dhcpErrors(p.Child("dhcp6"), p.Child("gateway6"), ifc.Gateway6, v6, "dhcp6", "IPv6")...)
	}
	for k, s := range ifc.Nameservers {
		if !isIP(s) {
			errs = append(errs, field.Invalid(p.Child("nameservers").Index(k), s, "must be an IPv4 or IPv6 address"))
		}
	}
	for k, route := range ifc.Routes {
		errs = append(errs, routeErrors(route, p.Child("routes").Index(k))...)
	}
	return errs
}

// gatewayErrors is NET-6/7: a gateway other than None needs an address of its family and
// must itself be one.
func gatewayErrors(p *field.Path, gw string, addrs []string, family string, is func(netip.Addr) bool) field.ErrorList {
	if gw == "" || gw == "None" {
		return nil
	}
	var errs field.ErrorList
	if len(addrs) == 0 {
		errs = append(errs, field.Invalid(p, gw, "needs an "+family+" address in addresses"))
	}
	if a, ok := parseIP(gw); !ok || !is(a) {
		errs = append(errs, field.Invalid(p, gw, "must be an "+family+" address"))
	}
	return errs
}

// dhcpErrors is NET-8/9: DHCP excludes static addresses and a gateway of its family.
func dhcpErrors(p, gwPath *field.Path, gw string, addrs []string, name, family string) field.ErrorList {
	var errs field.ErrorList
	if len(addrs) > 0 {
		errs = append(errs, field.Invalid(p, strings.Join(addrs, ","), name+" excludes static "+family+" addresses"))
	}
	if gw != "" {
		errs = append(errs, field.Invalid(gwPath, gw, name+" excludes a gateway of its family"))
	}
	return errs
}

// routeErrors is NET-11: to is default or a prefix, via an address of the same family.
func routeErrors(route VirtualMachineNetworkRouteSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var to netip.Prefix
	toOK := false
	if route.To != "default" {
		var err error
		if to, err = netip.ParsePrefix(route.To); err != nil {
			errs = append(errs, field.Invalid(p.Child("to"), route.To, `must be "default" or an IP address with a prefix length`))
		} else {
			toOK = true
		}
	}
	via, ok := parseIP(route.Via)
	if !ok {
		errs = append(errs, field.Invalid(p.Child("via"), route.Via, "must be an IPv4 or IPv6 address"))
	} else if toOK && isIPv4(to.Addr()) != isIPv4(via) {
		errs = append(errs, field.Invalid(p, "", "to and via must be of the same IP family"))
	}
	return errs
}

// interfaceRefErrors is NET-12..14b: the name of the provider's interface object, the MAC
// address, and the network ref against the namespace's provider.
func interfaceRefErrors(vmName string, ifc *VirtualMachineNetworkInterfaceSpec, p *field.Path, provider string) field.ErrorList {
	var errs field.ErrorList
	var ref PartialObjectRef
	if ifc.Network != nil {
		ref = *ifc.Network
	}
	named := provider == "" || provider == NetworkProviderNamed
	// A Named provider's network name is a vSphere network name (e.g. "VM Network"), not
	// part of any object name, so it is left out of the composed name.
	composed := vmName + "-" + ifc.Name
	if ref.Name != "" && !named {
		composed = vmName + "-" + ref.Name + "-" + ifc.Name
	}
	if len(k8svalidation.IsDNS1123Subdomain(composed)) > 0 {
		errs = append(errs, field.Invalid(p.Child("name"), composed, "the composed network interface name must be a DNS-1123 subdomain"))
	}
	gv, gvErr := schema.ParseGroupVersion(ref.APIVersion)
	if ifc.MACAddr != "" && (gvErr != nil || gv.Group != vpcNetworkGroup) {
		errs = append(errs, field.Invalid(p.Child("macAddr"), ifc.MACAddr, "macAddr needs a VPC network ("+vpcNetworkGroup+")"))
	}
	if named || ref.APIVersion == "" {
		return errs
	}
	netPath := p.Child("network")
	if gvErr != nil {
		return append(errs, field.Invalid(netPath.Child("apiVersion"), ref.APIVersion, "must be a group/version"))
	}
	kinds, ok := providerNetworkKinds[provider]
	if !ok || gv.Group == "" || ref.Kind == "" {
		return errs
	}
	served := providerNetworkRef(provider).APIVersion
	if want, _ := schema.ParseGroupVersion(served); gv.Group != want.Group {
		return append(errs, field.NotSupported(netPath.Child("apiVersion"), ref.APIVersion, []string{served}))
	}
	if !slices.Contains(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(netPath.Child("kind"), ref.Kind, kinds))
	}
	return errs
}

// parseIP reads an IPv4 or IPv6 address; zoned addresses (fe80::1%eth0) are not accepted.
func parseIP(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	return a, err == nil && a.Zone() == ""
}

func isIP(s string) bool {
	_, ok := parseIP(s)
	return ok
}

// isIPv4 counts IPv4-mapped IPv6 addresses as IPv4, as the guest tools do.
func isIPv4(a netip.Addr) bool { return a.Unmap().Is4() }

func isIPv6(a netip.Addr) bool { return a.Is6() && !a.Is4In6() }
