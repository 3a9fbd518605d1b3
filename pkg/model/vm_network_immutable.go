package model

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// annotationFailedOverVM marks a VM failed over by privileged tooling; it may attach its
// interfaces to other networks (NET-16/17 are skipped).
const annotationFailedOverVM = "vmoperator.vmware.com/failed-over-vm"

// validateNetworkImmutable is NET-15..18 (MutableNetworks OFF, and the seed's "network
// configuration is immutable"): on update nothing under spec.network may change except
// spec.network.disabled. It runs as part of validateImmutable.
func validateNetworkImmutable(r *vmReq) field.ErrorList {
	n, old := networkOf(r.New), networkOf(r.Old)
	ifPath := networkPath.Child("interfaces")
	if len(n.Interfaces) != len(old.Interfaces) {
		return append(field.ErrorList{field.Forbidden(ifPath, "network interfaces cannot be added or removed")},
			globalNetworkChanges(n, old)...)
	}
	_, failedOver := r.New.Annotations[annotationFailedOverVM]
	var errs field.ErrorList
	for i := range n.Interfaces {
		if failedOver {
			break
		}
		ifc, was := &n.Interfaces[i], &old.Interfaces[i]
		p := ifPath.Index(i)
		if ifc.Name != was.Name {
			errs = append(errs, field.Forbidden(p.Child("name"), "network interfaces cannot be renamed"))
		}
		if !equality.Semantic.DeepEqual(ifc.Network, was.Network) {
			errs = append(errs, field.Forbidden(p.Child("network"), "network interfaces cannot move to another network"))
		}
		if ifc.MACAddr != was.MACAddr {
			errs = append(errs, field.Invalid(p.Child("macAddr"), ifc.MACAddr, "field is immutable"))
		}
	}
	errs = append(errs, globalNetworkChanges(n, old)...)
	for i := range n.Interfaces {
		errs = append(errs, interfaceChanges(&n.Interfaces[i], &old.Interfaces[i], ifPath.Index(i))...)
	}
	return errs
}

func networkOf(vm *VirtualMachine) *VirtualMachineNetworkSpec {
	if vm == nil || vm.Spec.Network == nil {
		return &VirtualMachineNetworkSpec{}
	}
	return vm.Spec.Network
}

// fieldChange is one field compared by NET-18.
type fieldChange struct {
	name     string
	new, old any
}

// changedFields is NET-18 for a list of fields: Forbidden for each that differs.
func changedFields(p *field.Path, fields []fieldChange) field.ErrorList {
	var errs field.ErrorList
	for _, f := range fields {
		if !equality.Semantic.DeepEqual(f.new, f.old) {
			errs = append(errs, field.Forbidden(p.Child(f.name), "network configuration is immutable"))
		}
	}
	return errs
}

func globalNetworkChanges(n, old *VirtualMachineNetworkSpec) field.ErrorList {
	return changedFields(networkPath, []fieldChange{
		{"hostName", n.HostName, old.HostName},
		{"domainName", n.DomainName, old.DomainName},
		{"nameservers", n.Nameservers, old.Nameservers},
		{"searchDomains", n.SearchDomains, old.SearchDomains},
	})
}

func interfaceChanges(ifc, was *VirtualMachineNetworkInterfaceSpec, p *field.Path) field.ErrorList {
	return changedFields(p, []fieldChange{
		{"guestDeviceName", ifc.GuestDeviceName, was.GuestDeviceName},
		{"addresses", ifc.Addresses, was.Addresses},
		{"dhcp4", ifc.DHCP4, was.DHCP4},
		{"dhcp6", ifc.DHCP6, was.DHCP6},
		{"gateway4", ifc.Gateway4, was.Gateway4},
		{"gateway6", ifc.Gateway6, was.Gateway6},
		{"mtu", ifc.MTU, was.MTU},
		{"nameservers", ifc.Nameservers, was.Nameservers},
		{"routes", ifc.Routes, was.Routes},
		{"searchDomains", ifc.SearchDomains, was.SearchDomains},
	})
}
