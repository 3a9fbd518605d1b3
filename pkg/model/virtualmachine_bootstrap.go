package model

// VirtualMachineBootstrapSpec chooses how the guest is customized: CloudInit alone, LinuxPrep or
// Sysprep (each optionally with VAppConfig), or VAppConfig alone.
type VirtualMachineBootstrapSpec struct {
	// CloudInit customizes Linux guests with Cloud-Init (or Windows with Cloudbase-Init); it
	// excludes every other provider.
	CloudInit *VirtualMachineBootstrapCloudInitSpec `json:"cloudInit,omitempty"`

	// LinuxPrep customizes Linux guests with vSphere guest customization.
	LinuxPrep *VirtualMachineBootstrapLinuxPrepSpec `json:"linuxPrep,omitempty"`

	// Sysprep customizes Windows guests with vSphere guest customization.
	Sysprep *VirtualMachineBootstrapSysprepSpec `json:"sysprep,omitempty"`

	// VAppConfig passes vApp (OVF) properties into the guest.
	VAppConfig *VirtualMachineBootstrapVAppConfigSpec `json:"vAppConfig,omitempty"`
}

// VirtualMachineBootstrapCloudInitSpec is the Cloud-Init configuration of a VM.
type VirtualMachineBootstrapCloudInitSpec struct {
	// InstanceID is the Cloud-Init instance ID; it defaults to the VM's BIOS UUID.
	InstanceID string `json:"instanceID,omitempty"`

	// CloudConfig is the user data written as a subset of cloud-config; it excludes rawCloudConfig.
	CloudConfig *CloudConfig `json:"cloudConfig,omitempty"`

	// RawCloudConfig takes the user data from a Secret key (plain, base64 or gzip+base64); it
	// excludes cloudConfig.
	RawCloudConfig *SecretKeySelector `json:"rawCloudConfig,omitempty"`

	// SSHAuthorizedKeys are public SSH keys for the guest's default user.
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`

	// UseGlobalNameserversAsDefault gives interfaces without nameservers the global ones;
	// unset means true.
	UseGlobalNameserversAsDefault *bool `json:"useGlobalNameserversAsDefault,omitempty"`

	// UseGlobalSearchDomainsAsDefault gives interfaces without search domains the global ones;
	// unset means true.
	UseGlobalSearchDomainsAsDefault *bool `json:"useGlobalSearchDomainsAsDefault,omitempty"`

	// WaitOnNetwork4 makes the guest's datasource wait for an IPv4 address before it writes
	// instance data.
	WaitOnNetwork4 *bool `json:"waitOnNetwork4,omitempty"`

	// WaitOnNetwork6 makes the guest's datasource wait for an IPv6 address before it writes
	// instance data.
	WaitOnNetwork6 *bool `json:"waitOnNetwork6,omitempty"`
}

// VirtualMachineBootstrapLinuxPrepSpec is the LinuxPrep guest customization of a VM.
type VirtualMachineBootstrapLinuxPrepSpec struct {
	// HardwareClockIsUTC says whether the hardware clock keeps UTC rather than local time.
	HardwareClockIsUTC *bool `json:"hardwareClockIsUTC,omitempty"`

	// TimeZone is the guest's tz database time zone, e.g. Europe/Sofia.
	TimeZone string `json:"timeZone,omitempty"`

	// ExpirePasswordAfterNextLogin forces root to change its password at the next login.
	ExpirePasswordAfterNextLogin bool `json:"expirePasswordAfterNextLogin,omitempty"`

	// Password sets the root password from a Secret; the key defaults to "password".
	Password *PasswordSecretKeySelector `json:"password,omitempty"`

	// ScriptText is a script run before and after customization, inline or from a Secret.
	ScriptText *ValueOrSecretKeySelector `json:"scriptText,omitempty"`

	// CustomizeAtNextPowerOn: true customizes at the next power-on and is then reset to false;
	// false never customizes; unset customizes whenever the customization changed.
	CustomizeAtNextPowerOn *bool `json:"customizeAtNextPowerOn,omitempty"`
}

// VirtualMachineBootstrapSysprepSpec is the Sysprep guest customization of a VM.
type VirtualMachineBootstrapSysprepSpec struct {
	// Sysprep is the answer file written as an object; it excludes rawSysprep.
	Sysprep *Sysprep `json:"sysprep,omitempty"`

	// RawSysprep takes a complete unattend XML answer file from a Secret key; it excludes sysprep.
	RawSysprep *SecretKeySelector `json:"rawSysprep,omitempty"`

	// CustomizeAtNextPowerOn: true customizes at the next power-on and is then reset to false;
	// false never customizes; unset customizes whenever the customization changed.
	CustomizeAtNextPowerOn *bool `json:"customizeAtNextPowerOn,omitempty"`
}

// VirtualMachineBootstrapVAppConfigSpec sets vApp (OVF) properties declared by the image.
type VirtualMachineBootstrapVAppConfigSpec struct {
	// Properties are the property values; a value may be a template over the VM's network data.
	// +listType=map
	// +listMapKey=key
	Properties []KeyValueOrSecretKeySelectorPair `json:"properties,omitempty"`

	// RawProperties names a Secret whose keys and values are used as the properties; it excludes
	// properties.
	RawProperties string `json:"rawProperties,omitempty"`
}
