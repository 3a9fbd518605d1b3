package model

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualMachineGroup manages VMs and nested groups as one unit: power, boot order and placement.
type VirtualMachineGroup struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the group's desired power state and boot order.
	Spec VirtualMachineGroupSpec `json:"spec,omitempty"`

	// Status is the observed state of the group and its members.
	Status VirtualMachineGroupStatus `json:"status,omitempty"`
}

// VirtualMachineGroupList is a list of VM groups.
type VirtualMachineGroupList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the groups in the list.
	Items []VirtualMachineGroup `json:"items"`
}

// VirtualMachineGroupSpec is the desired state of a VM group.
type VirtualMachineGroupSpec struct {
	// GroupName names the parent group this group belongs to.
	GroupName string `json:"groupName,omitempty"`

	// BootOrder lists the members in power-on order: each entry starts together, after the
	// previous entries and its own delay.
	BootOrder []VirtualMachineGroupBootOrderGroup `json:"bootOrder,omitempty"`

	// PowerState is the power state all members should be in; empty leaves members alone until
	// it is first set, and once set it cannot be emptied again (VMG-3).
	// +kubebuilder:validation:Enum=PoweredOn;PoweredOff;Suspended;""
	PowerState PowerState `json:"powerState,omitempty"`

	// NextForcePowerStateSyncTime pushes the group's power state to all members again when set
	// to "now".
	NextForcePowerStateSyncTime string `json:"nextForcePowerStateSyncTime,omitempty"`

	// PowerOffMode is copied to members when the group's power state is applied.
	PowerOffMode PowerOpMode `json:"powerOffMode,omitempty"`

	// SuspendMode is copied to members when the group's power state is applied.
	SuspendMode PowerOpMode `json:"suspendMode,omitempty"`
}

// VirtualMachineGroupBootOrderGroup is one step of a group's boot order.
type VirtualMachineGroupBootOrderGroup struct {
	// Members are the VMs and groups powered on together in this step.
	// +listType=map
	// +listMapKey=kind
	// +listMapKey=name
	Members []GroupMember `json:"members,omitempty"`

	// PowerOnDelay is how long to wait before powering on this step's members.
	PowerOnDelay *metav1.Duration `json:"powerOnDelay,omitempty"`
}

// GroupMember names a VM or group in the group's namespace.
type GroupMember struct {
	// Name is the member's object name.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// Kind is the member's kind: VirtualMachine or VirtualMachineGroup.
	// +kubebuilder:validation:Enum=VirtualMachine;VirtualMachineGroup
	// +kubebuilder:default=VirtualMachine
	Kind string `json:"kind,omitempty"`
}

// VirtualMachineGroupStatus is the observed state of a VM group.
type VirtualMachineGroupStatus struct {
	// Members are the observed members of the group.
	// +listType=map
	// +listMapKey=name
	// +listMapKey=kind
	Members []VirtualMachineGroupMemberStatus `json:"members,omitempty"`

	// LastUpdatedPowerStateTime is when the group's power state was last applied to its members.
	LastUpdatedPowerStateTime *metav1.Time `json:"lastUpdatedPowerStateTime,omitempty"`

	// Conditions report the group's health; Ready is true when every member is.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VirtualMachineGroupMemberStatus is the observed state of one group member.
type VirtualMachineGroupMemberStatus struct {
	// Name is the member's object name.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// Kind is the member's kind: VirtualMachine or VirtualMachineGroup.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=VirtualMachine;VirtualMachineGroup
	Kind string `json:"kind"`

	// UID is the member object's metadata.uid.
	UID types.UID `json:"uid,omitempty"`

	// Placement is where the member VM is to be placed; set for VMs only.
	Placement *VirtualMachinePlacementStatus `json:"placement,omitempty"`

	// PowerState is the member VM's observed power state; set for VMs only.
	PowerState *PowerState `json:"powerState,omitempty"`

	// Conditions report the member's link, power sync and placement.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VirtualMachinePlacementStatus is the placement recommended for a group member VM.
type VirtualMachinePlacementStatus struct {
	// Zone is the recommended zone.
	Zone string `json:"zoneID,omitempty"`

	// Node is the recommended ESXi host.
	Node string `json:"node,omitempty"`

	// Pool is the recommended resource pool.
	Pool string `json:"pool,omitempty"`

	// Datastores are the recommended datastores for the VM's files and disks.
	Datastores []VirtualMachineGroupPlacementDatastoreStatus `json:"datastores,omitempty"`
}

// VirtualMachineGroupPlacementDatastoreStatus is one recommended datastore.
type VirtualMachineGroupPlacementDatastoreStatus struct {
	// Name is the datastore's name.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// ID is the datastore's managed object ID.
	ID string `json:"id,omitempty"`

	// URL is the datastore's URL.
	URL string `json:"url,omitempty"`

	// SupportedDiskFormats are the disk formats the datastore supports.
	SupportedDiskFormats []string `json:"supportedDiskFormats,omitempty"`

	// DiskKey is the device key of the disk this recommendation is for; absent for the VM's
	// home directory.
	DiskKey *int32 `json:"diskKey,omitempty"`

	// TopLevelDirectoryCreateSupported is false when directories must be made through the
	// namespace manager (e.g. vSAN).
	TopLevelDirectoryCreateSupported bool `json:"topLevelDirectoryCreateSupported,omitempty"`
}

// The kinds a group member can have.
const (
	GroupMemberKindVirtualMachine      = "VirtualMachine"
	GroupMemberKindVirtualMachineGroup = "VirtualMachineGroup"
)
