package model

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// VirtualMachineCryptoSpec describes how a VM is encrypted.
type VirtualMachineCryptoSpec struct {
	// EncryptionClassName names the EncryptionClass whose key provider and key encrypt the VM;
	// changing it rekeys the VM.
	EncryptionClassName string `json:"encryptionClassName,omitempty"`

	// UseDefaultKeyProvider lets the platform's default key provider encrypt the VM when no
	// EncryptionClass is named.
	// +kubebuilder:default=true
	UseDefaultKeyProvider *bool `json:"useDefaultKeyProvider,omitempty"`

	// VTPMMode says whether a vTPM carried by a VM-type image is cloned (Clone) or replaced by a
	// new one (New).
	// +kubebuilder:default=New
	VTPMMode VTPMMode `json:"vTPMMode,omitempty"`
}

// VTPMMode says what happens to the vTPM of an encrypted VM-type image when a VM is deployed from it.
// +kubebuilder:validation:Enum=Clone;New
type VTPMMode string

// Clone keeps the image's vTPM, New gives the VM a fresh one.
const (
	VTPMModeClone VTPMMode = "Clone"
	VTPMModeNew   VTPMMode = "New"
)

// VirtualMachineAdvancedSpec holds rarely needed VM settings.
type VirtualMachineAdvancedSpec struct {
	// BootDiskCapacity is the size of the boot disk (the image's first disk), a whole number of
	// MiB; the disk is only ever grown.
	BootDiskCapacity *resource.Quantity `json:"bootDiskCapacity,omitempty"`

	// DefaultVolumeProvisioningMode is the provisioning of disks created for this VM from now on.
	DefaultVolumeProvisioningMode VolumeProvisioningMode `json:"defaultVolumeProvisioningMode,omitempty"`

	// ChangeBlockTracking turns on changed block tracking, which incremental backups rely on.
	ChangeBlockTracking *bool `json:"changeBlockTracking,omitempty"`
}

// VolumeProvisioningMode is how a virtual disk's space is allocated.
// +kubebuilder:validation:Enum=Thin;Thick;ThickEagerZero
type VolumeProvisioningMode string

// Thin allocates on write, Thick up front, ThickEagerZero up front and zeroed.
const (
	VolumeProvisioningModeThin           VolumeProvisioningMode = "Thin"
	VolumeProvisioningModeThick          VolumeProvisioningMode = "Thick"
	VolumeProvisioningModeThickEagerZero VolumeProvisioningMode = "ThickEagerZero"
)

// VirtualMachineReservedSpec holds VM settings reserved for the platform.
type VirtualMachineReservedSpec struct {
	// ResourcePolicyName names the VirtualMachineSetResourcePolicy that places the VM; it cannot
	// change after create.
	ResourcePolicyName string `json:"resourcePolicyName,omitempty"`
}

// VirtualMachineBootOptions controls a VM's firmware and boot behaviour.
type VirtualMachineBootOptions struct {
	// Firmware is the firmware the VM boots with: bios or efi; when empty the image's or class's
	// choice applies.
	Firmware FirmwareType `json:"firmware,omitempty"`

	// BootDelay is how long the firmware waits after power-on before it starts booting.
	BootDelay *metav1.Duration `json:"bootDelay,omitempty"`

	// BootOrder lists the devices to try booting from, first entry first; it can only be set on
	// an existing VM.
	BootOrder []BootableDevice `json:"bootOrder,omitempty"`

	// BootRetry says whether a VM that found nothing to boot tries again after bootRetryDelay.
	// +kubebuilder:validation:Enum=Enabled;Disabled
	// +kubebuilder:default=Disabled
	BootRetry string `json:"bootRetry,omitempty"`

	// BootRetryDelay is how long a VM waits before it retries a failed boot; needs bootRetry Enabled.
	BootRetryDelay *metav1.Duration `json:"bootRetryDelay,omitempty"`

	// EnterBootSetup makes the VM enter its firmware setup at its next boot; empty is
	// Disabled.
	// +kubebuilder:validation:Enum=Enabled;Disabled
	EnterBootSetup string `json:"enterBootSetup,omitempty"`

	// EFISecureBoot makes EFI firmware refuse boot images whose signature does not verify; needs
	// firmware efi.
	// +kubebuilder:validation:Enum=Enabled;Disabled
	// +kubebuilder:default=Disabled
	EFISecureBoot string `json:"efiSecureBoot,omitempty"`

	// NetworkBootProtocol is the protocol used for network (PXE) boot: IP4 or IP6.
	// +kubebuilder:validation:Enum=IP4;IP6
	// +kubebuilder:default=IP4
	NetworkBootProtocol string `json:"networkBootProtocol,omitempty"`
}

// FirmwareType is the firmware a VM boots with.
// +kubebuilder:validation:Enum=bios;efi
type FirmwareType string

// The two firmware types vSphere offers.
const (
	FirmwareBIOS FirmwareType = "bios"
	FirmwareEFI  FirmwareType = "efi"
)

// BootableDevice is one entry of a VM's boot order.
type BootableDevice struct {
	// Type is the kind of device: Disk, Network or CDRom.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=Disk;Network;CDRom
	Type string `json:"type"`

	// Name names the volume (Disk) or network interface (Network); it is ignored for CDRom.
	Name string `json:"name,omitempty"`
}

// The boot options' on/off values and boot device types.
const (
	BootOptionEnabled  = "Enabled"
	BootOptionDisabled = "Disabled"

	BootDeviceDisk    = "Disk"
	BootDeviceNetwork = "Network"
	BootDeviceCDRom   = "CDRom"
)

// VirtualMachineReadinessProbeSpec decides when a VM counts as Ready; exactly one of its
// actions may be set.
type VirtualMachineReadinessProbeSpec struct {
	// TCPSocket reports Ready when a TCP connection to the VM can be opened.
	TCPSocket *TCPSocketAction `json:"tcpSocket,omitempty"`

	// GuestHeartbeat reports Ready when the VMware Tools heartbeat is at least the threshold.
	GuestHeartbeat *GuestHeartbeatAction `json:"guestHeartbeat,omitempty"`

	// GuestInfo reports Ready when every listed guestinfo key matches its value.
	GuestInfo []GuestInfoAction `json:"guestInfo,omitempty"`

	// TimeoutSeconds is how long a TCP probe may take to connect, in seconds; 10 when unset.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=60
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`

	// PeriodSeconds is how often the probe runs while the VM is powered on, in seconds; 10
	// when unset.
	// +kubebuilder:validation:Minimum=1
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`
}

// TCPSocketAction probes a VM by opening a TCP connection.
type TCPSocketAction struct {
	// Port is the port number (1-65535) or IANA service name to connect to.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:XIntOrString
	Port intstr.IntOrString `json:"port"`

	// Host is the host to connect to; it defaults to the primary IP address the guest
	// reports (status.network.primaryIP4, else primaryIP6).
	Host string `json:"host,omitempty"`
}

// GuestHeartbeatAction probes a VM through the VMware Tools heartbeat.
type GuestHeartbeatAction struct {
	// ThresholdStatus is the lowest heartbeat colour that counts as ready: yellow or green.
	// +kubebuilder:validation:Enum=yellow;green
	// +kubebuilder:default=green
	ThresholdStatus string `json:"thresholdStatus,omitempty"`
}

// GuestInfoAction matches one guestinfo key published by the guest.
type GuestInfoAction struct {
	// Key is the guestinfo key, without the "guestinfo." prefix.
	// +kubebuilder:validation:Required
	Key string `json:"key"`

	// Value is an RE2 regular expression the key's value must match; empty matches anything.
	Value string `json:"value,omitempty"`
}
