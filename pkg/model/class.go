package model

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VirtualMachineClass is an admin-curated size and shape of virtual hardware that VMs are
// deployed with.
type VirtualMachineClass struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the class's hardware and policies.
	Spec VirtualMachineClassSpec `json:"spec,omitempty"`

	// Status is the observed state of the class; it is empty.
	Status VirtualMachineClassStatus `json:"status,omitempty"`
}

// VirtualMachineClassList is a list of virtual machine classes.
type VirtualMachineClassList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the classes in the list.
	Items []VirtualMachineClass `json:"items"`
}

// VirtualMachineClassSpec is the virtual hardware and resource policy a class gives its VMs.
type VirtualMachineClassSpec struct {
	// ControllerName names the controller that reconciles VMs of this class; once set it cannot
	// be cleared.
	ControllerName string `json:"controllerName,omitempty"`

	// Hardware is the class's CPUs, memory, devices and instance storage.
	Hardware *VirtualMachineClassHardware `json:"hardware,omitempty"`

	// Policies are the class's CPU and memory reservations and limits.
	Policies *VirtualMachineClassPolicies `json:"policies,omitempty"`

	// Description is free text describing the class.
	Description string `json:"description,omitempty"`

	// ConfigSpec is a vSphere VirtualMachineConfigSpec as JSON with _typeName discriminators;
	// when present its CPU, memory and devices take precedence over hardware.
	// +kubebuilder:pruning:PreserveUnknownFields
	ConfigSpec json.RawMessage `json:"configSpec,omitempty"`

	// ReservedProfileID is the reservation profile the class belongs to.
	ReservedProfileID string `json:"reservedProfileID,omitempty"`

	// ReservedSlots is how many VMs of this class the reservation holds room for.
	// +kubebuilder:validation:Minimum=0
	ReservedSlots int32 `json:"reservedSlots,omitempty"`
}

// VirtualMachineClassHardware is the virtual hardware a class gives its VMs.
type VirtualMachineClassHardware struct {
	// Cpus is the number of virtual CPUs.
	Cpus int64 `json:"cpus,omitempty"`

	// Memory is the memory size.
	Memory *resource.Quantity `json:"memory,omitempty"`

	// Devices are the passthrough devices: vGPUs and dynamic DirectPath I/O devices.
	Devices *VirtualDevices `json:"devices,omitempty"`

	// InstanceStorage is local storage created for each VM of the class.
	InstanceStorage *InstanceStorage `json:"instanceStorage,omitempty"`
}

// VirtualDevices lists a class's passthrough devices.
type VirtualDevices struct {
	// VGPUDevices are the NVIDIA vGPUs, one per profile.
	// +listType=map
	// +listMapKey=profileName
	VGPUDevices []VGPUDevice `json:"vgpuDevices,omitempty"`

	// DynamicDirectPathIODevices are PCI devices passed through by vendor and device ID.
	DynamicDirectPathIODevices []DynamicDirectPathIODevice `json:"dynamicDirectPathIODevices,omitempty"`
}

// VGPUDevice is one NVIDIA vGPU of a class.
type VGPUDevice struct {
	// ProfileName is the vGPU profile, e.g. grid_p40-1q.
	// +kubebuilder:validation:Required
	ProfileName string `json:"profileName"`
}

// DynamicDirectPathIODevice is one PCI passthrough device of a class.
type DynamicDirectPathIODevice struct {
	// VendorID is the PCI vendor ID.
	// +kubebuilder:validation:Required
	VendorID int64 `json:"vendorID"`

	// DeviceID is the PCI device ID.
	// +kubebuilder:validation:Required
	DeviceID int64 `json:"deviceID"`

	// CustomLabel is the label that distinguishes devices with equal IDs.
	CustomLabel string `json:"customLabel,omitempty"`
}

// InstanceStorage is local storage created for each VM of a class.
type InstanceStorage struct {
	// StorageClass names the StorageClass that provides the instance storage.
	StorageClass string `json:"storageClass,omitempty"`

	// Volumes are the instance storage volumes each VM gets.
	Volumes []InstanceStorageVolume `json:"volumes,omitempty"`
}

// InstanceStorageVolume is one instance storage volume.
type InstanceStorageVolume struct {
	// Size is the volume's size.
	// +kubebuilder:validation:Required
	Size resource.Quantity `json:"size"`
}

// VirtualMachineClassPolicies are a class's resource policies.
type VirtualMachineClassPolicies struct {
	// Resources are the CPU and memory reservations (requests) and limits.
	Resources *VirtualMachineClassResources `json:"resources,omitempty"`
}

// VirtualMachineClassResources are a class's CPU and memory reservations and limits.
type VirtualMachineClassResources struct {
	// Requests are the guaranteed CPU and memory.
	Requests *VirtualMachineResourceSpec `json:"requests,omitempty"`

	// Limits are the most CPU and memory the VM may use.
	Limits *VirtualMachineResourceSpec `json:"limits,omitempty"`
}

// VirtualMachineResourceSpec is an amount of CPU and memory.
type VirtualMachineResourceSpec struct {
	// Cpu is the CPU amount.
	Cpu *resource.Quantity `json:"cpu,omitempty"` //nolint:revive // the JSON name is fixed by the API

	// Memory is the memory amount.
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// VirtualMachineClassStatus is the observed state of a class; it has no fields.
type VirtualMachineClassStatus struct{}

// VirtualMachineClassInstance is an immutable snapshot of a class's spec; served, but unused
// while classes are mutable.
type VirtualMachineClassInstance struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata; the label vmoperator.vmware.com/active marks the active instance.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the class spec captured by this instance.
	Spec VirtualMachineClassInstanceSpec `json:"spec,omitempty"`

	// Status is the observed state of the instance; it is empty.
	Status VirtualMachineClassInstanceStatus `json:"status,omitempty"`
}

// VirtualMachineClassInstanceList is a list of class instances.
type VirtualMachineClassInstanceList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the class instances in the list.
	Items []VirtualMachineClassInstance `json:"items"`
}

// VirtualMachineClassInstanceSpec is the class spec an instance captured.
type VirtualMachineClassInstanceSpec struct {
	// VirtualMachineClassSpec holds the captured class fields.
	VirtualMachineClassSpec `json:",inline"`
}

// VirtualMachineClassInstanceStatus is the observed state of a class instance; it has no fields.
type VirtualMachineClassInstanceStatus struct{}
