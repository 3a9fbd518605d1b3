package model

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// VirtualMachineNetworkStatus is the observed network state of a VM; most of it needs VMware
// Tools in the guest.
type VirtualMachineNetworkStatus struct {
	// Config is the network configuration handed to the guest (intended, not observed).
	Config *VirtualMachineNetworkConfigStatus `json:"config,omitempty"`

	// HostName is the host name the guest reports.
	HostName string `json:"hostName,omitempty"`

	// Interfaces are the network interfaces the guest reports.
	Interfaces []VirtualMachineNetworkInterfaceStatus `json:"interfaces,omitempty"`

	// IPStacks are the guest's IP stacks: DNS, routes and DHCP settings.
	IPStacks []VirtualMachineNetworkIPStackStatus `json:"ipStacks,omitempty"`

	// PrimaryIP4 is the VM's first usable IPv4 address.
	PrimaryIP4 string `json:"primaryIP4,omitempty"`

	// PrimaryIP6 is the VM's first usable IPv6 address.
	PrimaryIP6 string `json:"primaryIP6,omitempty"`
}

// VirtualMachineNetworkConfigStatus is the network configuration given to the guest.
type VirtualMachineNetworkConfigStatus struct {
	// Interfaces are the configured interfaces, one per interface in the spec.
	Interfaces []VirtualMachineNetworkConfigInterfaceStatus `json:"interfaces,omitempty"`

	// DNS is the configured guest-wide DNS.
	DNS *VirtualMachineNetworkConfigDNSStatus `json:"dns,omitempty"`
}

// VirtualMachineNetworkConfigInterfaceStatus is the configuration given for one interface.
type VirtualMachineNetworkConfigInterfaceStatus struct {
	// Name is the name of the interface in the spec.
	Name string `json:"name,omitempty"`

	// IP is the interface's configured IP settings.
	IP *VirtualMachineNetworkConfigInterfaceIPStatus `json:"ip,omitempty"`

	// DNS is the interface's configured DNS settings.
	DNS *VirtualMachineNetworkConfigDNSStatus `json:"dns,omitempty"`
}

// VirtualMachineNetworkConfigInterfaceIPStatus is the IP configuration given for one interface.
type VirtualMachineNetworkConfigInterfaceIPStatus struct {
	// DHCP says which address families are configured by DHCP.
	DHCP *VirtualMachineNetworkConfigDHCPStatus `json:"dhcp,omitempty"`

	// Addresses are the configured addresses with prefix length.
	Addresses []string `json:"addresses,omitempty"`

	// Gateway4 is the configured default IPv4 gateway.
	Gateway4 string `json:"gateway4,omitempty"`

	// Gateway6 is the configured default IPv6 gateway.
	Gateway6 string `json:"gateway6,omitempty"`
}

// VirtualMachineNetworkConfigDHCPStatus says which address families are configured by DHCP.
type VirtualMachineNetworkConfigDHCPStatus struct {
	// IP4 is the IPv4 DHCP setting.
	IP4 *VirtualMachineNetworkConfigDHCPOptionsStatus `json:"ip4,omitempty"`

	// IP6 is the IPv6 DHCP setting.
	IP6 *VirtualMachineNetworkConfigDHCPOptionsStatus `json:"ip6,omitempty"`
}

// VirtualMachineNetworkConfigDHCPOptionsStatus is the DHCP setting of one address family.
type VirtualMachineNetworkConfigDHCPOptionsStatus struct {
	// Enabled is true when the family is configured by DHCP.
	Enabled bool `json:"enabled,omitempty"`
}

// VirtualMachineNetworkConfigDNSStatus is a configured DNS setup.
type VirtualMachineNetworkConfigDNSStatus struct {
	// HostName is the host name part of the VM's DNS name.
	HostName string `json:"hostName,omitempty"`

	// DomainName is the domain part of the VM's DNS name.
	DomainName string `json:"domainName,omitempty"`

	// Nameservers are the DNS server addresses.
	Nameservers []string `json:"nameservers,omitempty"`

	// SearchDomains are the DNS search domains, most preferred first.
	SearchDomains []string `json:"searchDomains,omitempty"`
}

// VirtualMachineNetworkInterfaceStatus is the observed state of one network interface.
type VirtualMachineNetworkInterfaceStatus struct {
	// Name is the name of the matching interface in the spec; empty when there is none.
	Name string `json:"name,omitempty"`

	// DeviceKey is the vSphere device key of the network adapter.
	DeviceKey int32 `json:"deviceKey,omitempty"`

	// IP is the interface's observed IP configuration.
	IP *VirtualMachineNetworkInterfaceIPStatus `json:"ip,omitempty"`

	// DNS is the interface's observed DNS configuration.
	DNS *VirtualMachineNetworkDNSStatus `json:"dns,omitempty"`
}

// VirtualMachineNetworkInterfaceIPStatus is the observed IP configuration of one interface.
type VirtualMachineNetworkInterfaceIPStatus struct {
	// AutoConfigurationEnabled tells whether IPv6 router solicitation is on; absent when the
	// guest does not report it.
	AutoConfigurationEnabled *bool `json:"autoConfigurationEnabled,omitempty"`

	// DHCP is the interface's observed DHCP client configuration.
	DHCP *VirtualMachineNetworkDHCPStatus `json:"dhcp,omitempty"`

	// Addresses are the interface's observed IP addresses.
	Addresses []VirtualMachineNetworkInterfaceIPAddrStatus `json:"addresses,omitempty"`

	// MACAddr is the interface's observed MAC address.
	MACAddr string `json:"macAddr,omitempty"`
}

// VirtualMachineNetworkInterfaceIPAddrStatus is one observed IP address.
type VirtualMachineNetworkInterfaceIPAddrStatus struct {
	// Address is the IP address with prefix length.
	Address string `json:"address,omitempty"`

	// Lifetime is when the address expires.
	Lifetime *metav1.Time `json:"lifetime,omitempty"`

	// Origin is how the address was configured.
	// +kubebuilder:validation:Enum=dhcp;linklayer;manual;other;random
	Origin string `json:"origin,omitempty"`

	// State is the address's state as the guest reports it.
	// +kubebuilder:validation:Enum=deprecated;duplicate;inaccessible;invalid;preferred;tentative;unknown
	State string `json:"state,omitempty"`
}

// VirtualMachineNetworkDHCPStatus is the observed DHCP client configuration for IPv4 and IPv6.
type VirtualMachineNetworkDHCPStatus struct {
	// IP4 is the IPv4 DHCP client configuration.
	IP4 *VirtualMachineNetworkDHCPOptionsStatus `json:"ip4,omitempty"`

	// IP6 is the IPv6 DHCP client configuration.
	IP6 *VirtualMachineNetworkDHCPOptionsStatus `json:"ip6,omitempty"`
}

// VirtualMachineNetworkDHCPOptionsStatus is the observed DHCP client configuration of one
// address family.
type VirtualMachineNetworkDHCPOptionsStatus struct {
	// Config lists platform-specific DHCP client settings, keyed by a sequence number.
	// +listType=map
	// +listMapKey=key
	Config []KeyValuePair `json:"config,omitempty"`

	// Enabled is true when the DHCP client runs for this family.
	Enabled bool `json:"enabled,omitempty"`
}

// VirtualMachineNetworkDNSStatus is the guest's observed DNS client configuration.
type VirtualMachineNetworkDNSStatus struct {
	// DHCP is true when DNS was configured by DHCP.
	DHCP bool `json:"dhcp,omitempty"`

	// HostName is the host name part of the guest's DNS name.
	HostName string `json:"hostName,omitempty"`

	// DomainName is the domain part of the guest's DNS name.
	DomainName string `json:"domainName,omitempty"`

	// Nameservers are the DNS server addresses in use.
	Nameservers []string `json:"nameservers,omitempty"`

	// SearchDomains are the DNS search domains, most preferred first.
	SearchDomains []string `json:"searchDomains,omitempty"`
}

// VirtualMachineNetworkIPStackStatus is one of the guest's observed IP stacks.
type VirtualMachineNetworkIPStackStatus struct {
	// DHCP is the stack's DHCP client configuration.
	DHCP *VirtualMachineNetworkDHCPStatus `json:"dhcp,omitempty"`

	// DNS is the stack's DNS client configuration.
	DNS *VirtualMachineNetworkDNSStatus `json:"dns,omitempty"`

	// IPRoutes is the stack's routing table.
	IPRoutes []VirtualMachineNetworkIPRouteStatus `json:"ipRoutes,omitempty"`

	// KernelConfig lists the guest kernel's IP settings, keyed by a sequence number.
	// +listType=map
	// +listMapKey=key
	KernelConfig []KeyValuePair `json:"kernelConfig,omitempty"`
}

// VirtualMachineNetworkIPRouteStatus is one observed route.
type VirtualMachineNetworkIPRouteStatus struct {
	// Gateway is where matching packets are sent next.
	Gateway *VirtualMachineNetworkIPRouteGatewayStatus `json:"gateway,omitempty"`

	// NetworkAddress is the destination network with prefix length.
	NetworkAddress string `json:"networkAddress,omitempty"`
}

// VirtualMachineNetworkIPRouteGatewayStatus is the next hop of an observed route.
type VirtualMachineNetworkIPRouteGatewayStatus struct {
	// Device is the guest device the gateway is reached through.
	Device string `json:"device,omitempty"`

	// Address is the gateway's IP address.
	Address string `json:"address,omitempty"`
}
