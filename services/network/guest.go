package network

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// guestProperties are what the service reads of the guest, through VMware Tools: the
// status it reports (api-rules §3) and what the readiness probes read. The guest watch
// (guestwatch.go) polls them, but for the IP stack, to see them change.
var guestProperties = []string{
	"runtime.powerState", "guestHeartbeatStatus",
	"guest.ipAddress", "guest.hostName", "guest.net", "guest.ipStack",
	"guest.toolsRunningStatus", "guest.toolsVersion",
	"guest.guestFamily", "guest.customizationInfo", // the implied LinuxPrep, GuestCustomization
}

// The ExtraConfig keys in which cloud-init's VMware datasource publishes the guest's
// addresses (api-rules §3: preferred for the primary addresses with CloudInit).
const (
	keyLocalIPv4 = "guestinfo.local-ipv4"
	keyLocalIPv6 = "guestinfo.local-ipv6"
)

// guestNetwork is status.network as the guest reports it: every adapter (the interface
// it stands for, its device key and MAC address) with what the guest says of it, the
// guest's IP stacks, host name and primary addresses. Nothing here comes from the plan:
// an address the guest does not report is not shown.
func guestNetwork(mvm mo.VirtualMachine, vm *model.VirtualMachine, cards []types.BaseVirtualDevice, plans []ifacePlan) *model.VirtualMachineNetworkStatus {
	g := mvm.Guest
	if g == nil {
		g = &types.GuestInfo{}
	}
	out := &model.VirtualMachineNetworkStatus{HostName: g.HostName}
	byKey := map[int32]types.GuestNicInfo{}
	for _, nic := range g.Net {
		if nic.DeviceConfigId >= 0 { // negative: a guest pseudo-device without an adapter
			byKey[nic.DeviceConfigId] = nic
		}
	}
	for i, d := range cards {
		card := d.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
		s := model.VirtualMachineNetworkInterfaceStatus{DeviceKey: card.Key}
		if i < len(plans) {
			s.Name = plans[i].spec.Name
		}
		mac := card.MacAddress
		nic, reported := byKey[card.Key]
		if reported && nic.MacAddress != "" {
			mac = nic.MacAddress
		}
		if mac != "" {
			s.IP = &model.VirtualMachineNetworkInterfaceIPStatus{MACAddr: mac}
		}
		if reported {
			nicStatus(&s, nic)
		}
		out.Interfaces = append(out.Interfaces, s)
	}
	for _, st := range g.IpStack {
		out.IPStacks = append(out.IPStacks, ipStackStatus(st))
	}
	out.PrimaryIP4, out.PrimaryIP6 = primaryIPs(mvm, vm, out.Interfaces)
	return out
}

// nicStatus adds what the guest reports of one adapter: addresses with origin and state,
// DHCP and DNS.
func nicStatus(s *model.VirtualMachineNetworkInterfaceStatus, nic types.GuestNicInfo) {
	if s.IP == nil {
		s.IP = &model.VirtualMachineNetworkInterfaceIPStatus{}
	}
	if c := nic.IpConfig; c != nil {
		s.IP.AutoConfigurationEnabled = c.AutoConfigurationEnabled
		s.IP.DHCP = dhcpStatus(c.Dhcp)
		for _, a := range c.IpAddress {
			addr := model.VirtualMachineNetworkInterfaceIPAddrStatus{Address: a.IpAddress, Origin: a.Origin, State: a.State}
			if a.PrefixLength > 0 {
				addr.Address += "/" + strconv.Itoa(int(a.PrefixLength))
			}
			if a.Lifetime != nil {
				t := metav1.NewTime(*a.Lifetime)
				addr.Lifetime = &t
			}
			s.IP.Addresses = append(s.IP.Addresses, addr)
		}
	} else {
		// Tools that report no IP configuration still list the addresses.
		for _, a := range nic.IpAddress {
			s.IP.Addresses = append(s.IP.Addresses, model.VirtualMachineNetworkInterfaceIPAddrStatus{Address: a})
		}
	}
	if nic.DnsConfig != nil {
		s.DNS = dnsStatus(nic.DnsConfig)
	}
}

func ipStackStatus(st types.GuestStackInfo) model.VirtualMachineNetworkIPStackStatus {
	out := model.VirtualMachineNetworkIPStackStatus{DHCP: dhcpStatus(st.DhcpConfig), KernelConfig: keyValues(st.IpStackConfig)}
	if st.DnsConfig != nil {
		out.DNS = dnsStatus(st.DnsConfig)
	}
	if st.IpRouteConfig != nil {
		for _, r := range st.IpRouteConfig.IpRoute {
			if a, err := netip.ParseAddr(r.Network); err == nil && (a.IsLinkLocalUnicast() || a.IsMulticast()) {
				continue // the guest's own plumbing, noise to a user
			}
			route := model.VirtualMachineNetworkIPRouteStatus{NetworkAddress: fmt.Sprintf("%s/%d", r.Network, r.PrefixLength)}
			if r.Gateway.IpAddress != "" || r.Gateway.Device != "" {
				route.Gateway = &model.VirtualMachineNetworkIPRouteGatewayStatus{Address: r.Gateway.IpAddress, Device: r.Gateway.Device}
			}
			out.IPRoutes = append(out.IPRoutes, route)
		}
	}
	return out
}

func dnsStatus(c *types.NetDnsConfigInfo) *model.VirtualMachineNetworkDNSStatus {
	return &model.VirtualMachineNetworkDNSStatus{
		DHCP: c.Dhcp, HostName: c.HostName, DomainName: c.DomainName,
		Nameservers: c.IpAddress, SearchDomains: c.SearchDomain,
	}
}

func dhcpStatus(c *types.NetDhcpConfigInfo) *model.VirtualMachineNetworkDHCPStatus {
	if c == nil || (c.Ipv4 == nil && c.Ipv6 == nil) {
		return nil
	}
	out := &model.VirtualMachineNetworkDHCPStatus{}
	if c.Ipv4 != nil {
		out.IP4 = &model.VirtualMachineNetworkDHCPOptionsStatus{Enabled: c.Ipv4.Enable, Config: keyValues(c.Ipv4.Config)}
	}
	if c.Ipv6 != nil {
		out.IP6 = &model.VirtualMachineNetworkDHCPOptionsStatus{Enabled: c.Ipv6.Enable, Config: keyValues(c.Ipv6.Config)}
	}
	return out
}

func keyValues(kvs []types.KeyValue) []model.KeyValuePair {
	var out []model.KeyValuePair
	for _, kv := range kvs {
		out = append(out, model.KeyValuePair{Key: kv.Key, Value: kv.Value})
	}
	return out
}

// primaryIPs are the first usable address of each family the guest reports (api-rules
// §3): the one cloud-init published in ExtraConfig, else guest.ipAddress, else the
// first of the adapters' addresses.
func primaryIPs(mvm mo.VirtualMachine, vm *model.VirtualMachine, ifaces []model.VirtualMachineNetworkInterfaceStatus) (ip4, ip6 string) {
	var candidates []string
	if vm.Spec.Bootstrap != nil && vm.Spec.Bootstrap.CloudInit != nil && mvm.Config != nil {
		ec := object.OptionValueList(mvm.Config.ExtraConfig)
		for _, k := range []string{keyLocalIPv4, keyLocalIPv6} {
			if v, ok := ec.GetString(k); ok {
				candidates = append(candidates, v)
			}
		}
	}
	if mvm.Guest != nil {
		candidates = append(candidates, mvm.Guest.IpAddress)
	}
	for _, s := range ifaces {
		if s.IP != nil {
			for _, a := range s.IP.Addresses {
				candidates = append(candidates, a.Address)
			}
		}
	}
	for _, c := range candidates {
		a, ok := usableIP(c)
		switch {
		case !ok:
		case a.Is4() && ip4 == "":
			ip4 = a.String()
		case a.Is6() && ip6 == "":
			ip6 = a.String()
		}
	}
	return ip4, ip6
}

// usableIP parses an address, with or without prefix length, that others can reach the
// guest at: not unspecified, link-local or multicast. Loopback addresses count: VMware
// Tools never reports them, and a simulated guest given one (tests set 127.0.0.x in
// vcsim) is then reachable on this machine only.
func usableIP(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		p, perr := netip.ParsePrefix(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		a = p.Addr()
	}
	a = a.Unmap()
	if a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsMulticast() {
		return netip.Addr{}, false
	}
	return a, true
}

// toolsCondition sets VirtualMachineTools from guest.toolsRunningStatus: True while
// VMware Tools runs (its version in the message), False when it does not, Unknown when
// vCenter says nothing of the guest.
func toolsCondition(conds *reconcile.ConditionSet, g *types.GuestInfo) {
	if g == nil || g.ToolsRunningStatus == "" {
		conds.Set(model.ConditionTools, metav1.ConditionUnknown, model.ReasonNoGuestInfo, "vCenter reports nothing of the guest")
		return
	}
	switch types.VirtualMachineToolsRunningStatus(g.ToolsRunningStatus) {
	case types.VirtualMachineToolsRunningStatusGuestToolsRunning, types.VirtualMachineToolsRunningStatusGuestToolsExecutingScripts:
		msg := "VMware Tools is running"
		if v := g.ToolsVersion; v != "" && v != "0" {
			msg += ", version " + v
		}
		conds.Set(model.ConditionTools, metav1.ConditionTrue, model.ReasonToolsRunning, msg)
	default:
		conds.Set(model.ConditionTools, metav1.ConditionFalse, model.ReasonToolsNotRunning, "VMware Tools is not running")
	}
}

// networkSyncedCondition sets VirtualMachineGuestNetworkConfigSynced: True when the guest
// reports, on the adapter of every interface, each address the intended configuration
// gives it, and some address of each family it configures by DHCP.
func networkSyncedCondition(conds *reconcile.ConditionSet, plans []ifacePlan, observed *model.VirtualMachineNetworkStatus) {
	if len(plans) == 0 {
		return
	}
	var missing []string
	for _, p := range plans {
		have := reportedAddrs(observed, p.spec.Name)
		var want []string
		for _, a := range p.addresses {
			if pf, err := netip.ParsePrefix(a); err == nil && !have[pf.Addr()] {
				want = append(want, pf.Addr().String())
			}
		}
		if p.dhcp4 && !hasFamily(have, true) {
			want = append(want, "an IPv4 address by DHCP")
		}
		if p.dhcp6 && !hasFamily(have, false) {
			want = append(want, "an IPv6 address by DHCP")
		}
		if len(want) > 0 {
			missing = append(missing, fmt.Sprintf("%s: %s", p.spec.Name, strings.Join(want, ", ")))
		}
	}
	if len(missing) > 0 {
		conds.Set(model.ConditionGuestNetworkConfigSynced, metav1.ConditionFalse, model.ReasonNotSynced,
			"the guest does not report "+strings.Join(missing, "; "))
		return
	}
	conds.Set(model.ConditionGuestNetworkConfigSynced, metav1.ConditionTrue, model.ReasonSynced,
		fmt.Sprintf("IPv4=%q, IPv6=%q", observed.PrimaryIP4, observed.PrimaryIP6))
}

// reportedAddrs are the usable addresses the guest reports on the named interface.
func reportedAddrs(observed *model.VirtualMachineNetworkStatus, iface string) map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	for _, s := range observed.Interfaces {
		if s.Name != iface || s.IP == nil {
			continue
		}
		for _, a := range s.IP.Addresses {
			if ip, ok := usableIP(a.Address); ok {
				out[ip] = true
			}
		}
	}
	return out
}

func hasFamily(addrs map[netip.Addr]bool, v4 bool) bool {
	for a := range addrs {
		if a.Is4() == v4 {
			return true
		}
	}
	return false
}
