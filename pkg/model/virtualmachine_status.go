package model

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// VirtualMachineStatus is the observed state of a virtual machine; each service writes its part.
type VirtualMachineStatus struct {
	// Class references the VirtualMachineClass last applied to the VM.
	Class *LocalObjectRef `json:"class,omitempty"`

	// NodeName is the name of the ESXi host running the VM.
	NodeName string `json:"nodeName,omitempty"`

	// PowerState is the VM's observed power state.
	PowerState PowerState `json:"powerState,omitempty"`

	// Conditions report the progress and health of the VM, Ready first.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Crypto is the VM's observed encryption.
	Crypto *VirtualMachineCryptoStatus `json:"crypto,omitempty"`

	// Network is the VM's observed network state.
	Network *VirtualMachineNetworkStatus `json:"network,omitempty"`

	// UniqueID is vSphere's identifier of the VM, its managed object reference (vm-<n>).
	UniqueID string `json:"uniqueID,omitempty"`

	// BiosUUID is the BIOS UUID the VM actually has.
	BiosUUID string `json:"biosUUID,omitempty"`

	// InstanceUUID is the vSphere instance UUID the VM actually has.
	InstanceUUID string `json:"instanceUUID,omitempty"`

	// Volumes are the VM's observed disks, sorted by disk UUID.
	// +listType=map
	// +listMapKey=name
	// +listMapKey=type
	Volumes []VirtualMachineVolumeStatus `json:"volumes,omitempty"`

	// ChangeBlockTracking tells whether changed block tracking is on; absent when unknown.
	ChangeBlockTracking *bool `json:"changeBlockTracking,omitempty"`

	// Zone is the availability zone the VM runs in.
	Zone string `json:"zone,omitempty"`

	// LastRestartTime is when the VM was last restarted through nextRestartTime.
	LastRestartTime *metav1.Time `json:"lastRestartTime,omitempty"`

	// HardwareVersion is the VM's virtual hardware version, e.g. 21.
	HardwareVersion int32 `json:"hardwareVersion,omitempty"`

	// Storage sums up the VM's storage use and what it charges against the quota.
	Storage *VirtualMachineStorageStatus `json:"storage,omitempty"`

	// Provider is what vSphere itself reports about the VM.
	Provider *VirtualMachineProviderStatus `json:"provider,omitempty"`

	// CurrentSnapshot is the snapshot the VM currently runs from; not reported by vmop.
	CurrentSnapshot *VirtualMachineSnapshotReference `json:"currentSnapshot,omitempty"`

	// RootSnapshots are the roots of the VM's snapshot tree; not reported by vmop.
	RootSnapshots []VirtualMachineSnapshotReference `json:"rootSnapshots,omitempty"`

	// Guest is the guest operating system the VM is configured with.
	Guest *VirtualMachineGuestStatus `json:"guest,omitempty"`

	// Hardware is the VM's observed virtual hardware.
	Hardware *VirtualMachineHardwareStatus `json:"hardware,omitempty"`

	// Policies are the compute policies applied to the VM, explicit and mandatory ones.
	Policies []PolicyStatus `json:"policies,omitempty"`
}

// VirtualMachineCryptoStatus is a VM's observed encryption.
type VirtualMachineCryptoStatus struct {
	// Encrypted lists what is encrypted: Config (the VM's files except disks) and/or Disks.
	Encrypted []VirtualMachineEncryptionType `json:"encrypted,omitempty"`

	// ProviderID is the key provider of the key that encrypts the VM.
	ProviderID string `json:"providerID,omitempty"`

	// KeyID is the ID of the key that encrypts the VM.
	KeyID string `json:"keyID,omitempty"`

	// HasVTPM is true when the VM has a virtual TPM.
	HasVTPM bool `json:"hasVTPM,omitempty"`
}

// VirtualMachineEncryptionType names a part of a VM that can be encrypted.
// +kubebuilder:validation:Enum=Config;Disks
type VirtualMachineEncryptionType string

// Config covers the VM's files except disks; Disks means at least one disk is encrypted.
const (
	VirtualMachineEncryptionTypeConfig VirtualMachineEncryptionType = "Config"
	VirtualMachineEncryptionTypeDisks  VirtualMachineEncryptionType = "Disks"
)

// VirtualMachineGuestStatus is the guest operating system a VM is configured with.
type VirtualMachineGuestStatus struct {
	// GuestID is the vSphere guest identifier, e.g. ubuntu64Guest.
	GuestID string `json:"guestID,omitempty"`

	// GuestFullName is the guest operating system's full name, e.g. Ubuntu Linux (64-bit).
	GuestFullName string `json:"guestFullName,omitempty"`
}

// VirtualMachineProviderStatus is what vSphere itself reports about a VM.
type VirtualMachineProviderStatus struct {
	// CreationTimestamp is when vSphere created the VM.
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}

// VirtualMachineSnapshotReference points at one snapshot of a VM.
type VirtualMachineSnapshotReference struct {
	// Type tells snapshots managed through the API (Managed) from others (Unmanaged).
	// +kubebuilder:validation:Enum=Managed;Unmanaged
	// +kubebuilder:default=Managed
	Type string `json:"type"`

	// Name is the name of the VirtualMachineSnapshot; set for managed snapshots only.
	Name string `json:"name"`
}

// PolicyStatus is one policy applied to a VM and the policy generation applied.
type PolicyStatus struct {
	// LocalObjectRef identifies the applied policy.
	LocalObjectRef `json:",inline"`

	// Generation is the policy's metadata.generation that was applied.
	// +kubebuilder:validation:Required
	Generation int64 `json:"generation"`
}
