package model

// VirtualMachineNetworkSpec is a VM's desired network configuration.
type VirtualMachineNetworkSpec struct {
	// HostName is the guest's host name; it defaults to the VM's name.
	HostName string `json:"hostName,omitempty"`

	// DomainName is the guest's DNS domain; for Windows guests, the domain the computer joins.
	DomainName string `json:"domainName,omitempty"`

	// Disabled leaves the VM without any network interface; it has no effect once the VM exists.
	Disabled bool `json:"disabled,omitempty"`

	// Nameservers are DNS server addresses applied to the whole guest.
	Nameservers []string `json:"nameservers,omitempty"`

	// SearchDomains are DNS search domains applied to the whole guest.
	SearchDomains []string `json:"searchDomains,omitempty"`

	// Interfaces are the VM's network interfaces; one named eth0 on the namespace's default
	// network is added when none are given.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	Interfaces []VirtualMachineNetworkInterfaceSpec `json:"interfaces,omitempty"`
}

// VirtualMachineNetworkInterfaceSpec is one desired network interface of a VM.
type VirtualMachineNetworkInterfaceSpec struct {
	// Name identifies the interface within the VM: at least two lower-case letters or digits.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^[a-z0-9]{2,}$`
	Name string `json:"name"`

	// Network references the network the interface connects to; it defaults to the namespace's
	// default network.
	Network *PartialObjectRef `json:"network,omitempty"`

	// GuestDeviceName renames the device inside the guest (Cloud-Init only).
	// +kubebuilder:validation:Pattern=`^\w\w+$`
	GuestDeviceName string `json:"guestDeviceName,omitempty"`

	// MACAddr is the interface's MAC address; only VPC networks accept one.
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}:){5}([0-9A-Fa-f]{2})$`
	MACAddr string `json:"macAddr,omitempty"`

	// Addresses are static IPv4/IPv6 addresses with prefix length, e.g. 192.168.0.10/24.
	Addresses []string `json:"addresses,omitempty"`

	// DHCP4 configures IPv4 by DHCP; it excludes IPv4 addresses and gateway4.
	DHCP4 bool `json:"dhcp4,omitempty"`

	// DHCP6 configures IPv6 by DHCP; it excludes IPv6 addresses and gateway6.
	DHCP6 bool `json:"dhcp6,omitempty"`

	// Gateway4 is the default IPv4 gateway; "None" ignores the network provider's gateway.
	Gateway4 string `json:"gateway4,omitempty"`

	// Gateway6 is the default IPv6 gateway; "None" ignores the network provider's gateway.
	Gateway6 string `json:"gateway6,omitempty"`

	// MTU is the interface's maximum transmission unit in bytes (Cloud-Init only).
	MTU *int64 `json:"mtu,omitempty"`

	// Nameservers are DNS server addresses for this interface (Cloud-Init or Sysprep).
	Nameservers []string `json:"nameservers,omitempty"`

	// Routes are static routes through this interface (Cloud-Init only).
	Routes []VirtualMachineNetworkRouteSpec `json:"routes,omitempty"`

	// SearchDomains are DNS search domains for this interface (Cloud-Init only).
	SearchDomains []string `json:"searchDomains,omitempty"`
}

// VirtualMachineNetworkRouteSpec is one static route in the guest.
type VirtualMachineNetworkRouteSpec struct {
	// To is the destination: "default" or a CIDR.
	// +kubebuilder:validation:Required
	To string `json:"to"`

	// Via is the IP address of the next hop.
	// +kubebuilder:validation:Required
	Via string `json:"via"`

	// Metric is the route's priority; lower wins.
	// +kubebuilder:validation:Minimum=1
	Metric int32 `json:"metric,omitempty"`
}
