package network

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"strings"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
)

// gatewayNone in gateway4/gateway6 means: do not use the provider's gateway.
const gatewayNone = "None"

// ifacePlan is the intended configuration of one interface of spec.network.
type ifacePlan struct {
	spec               model.VirtualMachineNetworkInterfaceSpec
	network            string   // vSphere network name
	addresses          []string // with prefix length
	gateway4, gateway6 string
	dhcp4, dhcp6       bool
}

// dnsDefaults are the guest DNS settings used when spec.network gives none.
type dnsDefaults struct{ nameservers, searchDomains []string }

// interfaces are the interfaces the VM should have: none when it was deployed with
// networking disabled (deployedDisabled).
func interfaces(vm *model.VirtualMachine, disabled bool) []model.VirtualMachineNetworkInterfaceSpec {
	if vm.Spec.Network == nil || disabled {
		return nil
	}
	return vm.Spec.Network.Interfaces
}

// networkName is the vSphere network an interface connects to: the one its network ref
// names, else the namespace default.
func networkName(ifc model.VirtualMachineNetworkInterfaceSpec) string {
	if ifc.Network != nil && ifc.Network.Name != "" {
		return ifc.Network.Name
	}
	return inventory.DefaultNetwork
}

// goneHolders reports whether a claim's holder is an interface of the VM uid that ifaces
// no longer name (renamed or removed): what it held may pass to another of its interfaces.
func goneHolders(uid string, ifaces []model.VirtualMachineNetworkInterfaceSpec) func(holder string) bool {
	named := map[string]bool{}
	for _, ifc := range ifaces {
		named[holder(uid, ifc.Name)] = true
	}
	return func(h string) bool { return strings.HasPrefix(h, uid+"/") && !named[h] }
}

// plan gives every interface its addresses (the seed's intended-config table): the
// spec's static addresses; DHCP when the spec asks for it or the network has no pool;
// otherwise an address claimed from the network's pool, with the pool's gateway unless
// the spec names one (or None). prev is the configuration of the previous slice, whose
// addresses are claimed again first; inUse are the addresses the guest uses (guestUses).
func (h *handler) plan(ctx context.Context, uid string, ifaces []model.VirtualMachineNetworkInterfaceSpec, prev *model.VirtualMachineNetworkConfigStatus, inUse map[string]bool) ([]ifacePlan, error) {
	// A static address an interface that is gone (renamed) held passes to the one asking.
	gone := goneHolders(uid, ifaces)
	plans := make([]ifacePlan, 0, len(ifaces))
	for _, ifc := range ifaces {
		p := ifacePlan{spec: ifc, network: networkName(ifc), dhcp4: ifc.DHCP4, dhcp6: ifc.DHCP6}
		pool, pooled := h.ipam.pools[p.network]
		switch {
		case len(ifc.Addresses) > 0:
			if pooled {
				if err := h.claimStatic(ctx, pool, holder(uid, ifc.Name), ifc.Addresses, gone); err != nil {
					return nil, fmt.Errorf("address of %s on %q: %w", ifc.Name, p.network, err)
				}
			}
			p.addresses = ifc.Addresses
		case ifc.DHCP4:
		case !pooled:
			p.dhcp4 = true // a network without a pool is a DHCP network
		default:
			addr, err := h.ipam.claim(ctx, pool, holder(uid, ifc.Name), previousAddress(prev, ifc.Name))
			if err != nil {
				return nil, fmt.Errorf("address of %s on %q: %w", ifc.Name, p.network, err)
			}
			p.addresses = []string{netip.PrefixFrom(addr, pool.prefix.Bits()).String()}
			p.gateway4 = pool.gateway.String()
		}
		if ifc.Gateway4 != "" {
			p.gateway4 = ifc.Gateway4
		}
		if p.gateway4 == gatewayNone {
			p.gateway4 = ""
		}
		if ifc.Gateway6 != gatewayNone {
			p.gateway6 = ifc.Gateway6
		}
		plans = append(plans, p)
	}
	// An address the interfaces no longer have (changed, replaced by the pool's or DHCP,
	// its interface removed or renamed) is released once the guest does not use it any
	// more: until then another VM given it would clash with this one.
	if inUse == nil {
		return plans, nil // the guest cannot say
	}
	used := maps.Clone(inUse)
	for _, p := range plans {
		for _, a := range p.addresses {
			if prefix, err := netip.ParsePrefix(a); err == nil {
				used[prefix.Addr().String()] = true
			}
		}
	}
	if err := h.ipam.releaseAddresses(ctx, uid, func(addr string) bool { return used[addr] }); err != nil {
		return nil, err
	}
	return plans, nil
}

// guestUses are the addresses the VM's guest reports while it runs (or is suspended); nil
// when it cannot tell (VMware Tools not running), so that nothing is released meanwhile.
func guestUses(mvm mo.VirtualMachine) map[string]bool {
	out := map[string]bool{}
	if mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOff {
		return out
	}
	if mvm.Guest == nil || mvm.Guest.ToolsRunningStatus != string(types.VirtualMachineToolsRunningStatusGuestToolsRunning) {
		return nil
	}
	add := func(a string) {
		if ip, err := netip.ParseAddr(a); err == nil {
			out[ip.String()] = true
		}
	}
	add(mvm.Guest.IpAddress)
	for _, nic := range mvm.Guest.Net {
		for _, a := range nic.IpAddress {
			add(a)
		}
		if nic.IpConfig != nil {
			for _, a := range nic.IpConfig.IpAddress {
				add(a.IpAddress)
			}
		}
	}
	return out
}

// claimStatic claims the static addresses of an interface on a pooled network (admission
// checked their form); one a gone holder has passes to holder.
func (h *handler) claimStatic(ctx context.Context, p pool, holder string, addresses []string, gone func(holder string) bool) error {
	for _, a := range addresses {
		if prefix, err := netip.ParsePrefix(a); err == nil {
			if err := h.ipam.claimStatic(ctx, p, holder, prefix.Addr(), gone); err != nil {
				return err
			}
		}
	}
	return nil
}

// previousAddress is the IPv4 address the interface had in the previous slice.
func previousAddress(prev *model.VirtualMachineNetworkConfigStatus, iface string) netip.Addr {
	if prev == nil {
		return netip.Addr{}
	}
	for _, i := range prev.Interfaces {
		if i.Name != iface || i.IP == nil {
			continue
		}
		for _, a := range i.IP.Addresses {
			if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Is4() {
				return p.Addr()
			}
		}
	}
	return netip.Addr{}
}

// hostName is the guest's host name: spec.network.hostName, else the object's name.
func hostName(vm *model.VirtualMachine) string {
	if vm.Spec.Network != nil && vm.Spec.Network.HostName != "" {
		return vm.Spec.Network.HostName
	}
	return vm.Name
}

func domainName(vm *model.VirtualMachine) string {
	if vm.Spec.Network != nil {
		return vm.Spec.Network.DomainName
	}
	return ""
}

// globalDNS are the guest-wide DNS servers and search domains: the spec's, else the
// service's defaults.
func (d dnsDefaults) global(vm *model.VirtualMachine) (nameservers, searchDomains []string) {
	nameservers, searchDomains = d.nameservers, d.searchDomains
	if n := vm.Spec.Network; n != nil {
		if len(n.Nameservers) > 0 {
			nameservers = n.Nameservers
		}
		if len(n.SearchDomains) > 0 {
			searchDomains = n.SearchDomains
		}
	}
	return nameservers, searchDomains
}

// configStatus is status.network.config: the configuration handed to the guest.
func configStatus(vm *model.VirtualMachine, plans []ifacePlan, dns dnsDefaults) *model.VirtualMachineNetworkConfigStatus {
	ns, search := dns.global(vm)
	cfg := &model.VirtualMachineNetworkConfigStatus{DNS: &model.VirtualMachineNetworkConfigDNSStatus{
		HostName: hostName(vm), DomainName: domainName(vm), Nameservers: ns, SearchDomains: search,
	}}
	for _, p := range plans {
		ip := &model.VirtualMachineNetworkConfigInterfaceIPStatus{Addresses: p.addresses, Gateway4: p.gateway4, Gateway6: p.gateway6}
		if p.dhcp4 || p.dhcp6 {
			ip.DHCP = &model.VirtualMachineNetworkConfigDHCPStatus{}
			if p.dhcp4 {
				ip.DHCP.IP4 = &model.VirtualMachineNetworkConfigDHCPOptionsStatus{Enabled: true}
			}
			if p.dhcp6 {
				ip.DHCP.IP6 = &model.VirtualMachineNetworkConfigDHCPOptionsStatus{Enabled: true}
			}
		}
		iface := model.VirtualMachineNetworkConfigInterfaceStatus{Name: p.spec.Name, IP: ip}
		if len(p.spec.Nameservers) > 0 || len(p.spec.SearchDomains) > 0 {
			iface.DNS = &model.VirtualMachineNetworkConfigDNSStatus{Nameservers: p.spec.Nameservers, SearchDomains: p.spec.SearchDomains}
		}
		cfg.Interfaces = append(cfg.Interfaces, iface)
	}
	return cfg
}

// planProblem words a failure to plan for a condition message; other errors are retried.
func planProblem(err error) (string, bool) {
	if errors.Is(err, errPoolExhausted) || errors.Is(err, errAddressHeld) {
		return strings.TrimSpace(err.Error()), true
	}
	return "", false
}
