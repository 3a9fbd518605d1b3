package model

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VirtualMachineImage is an image in a namespace (an OVF, ISO or VM template in a content
// library) that VMs are deployed from.
type VirtualMachineImage struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata; the image service mirrors type, capabilities and OS into labels.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says where the image comes from.
	Spec VirtualMachineImageSpec `json:"spec,omitempty"`

	// Status is what the image service learned about the image.
	Status VirtualMachineImageStatus `json:"status,omitempty"`
}

// VirtualMachineImageList is a list of namespaced images.
type VirtualMachineImageList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the images in the list.
	Items []VirtualMachineImage `json:"items"`
}

// ClusterVirtualMachineImage is an image available to every namespace.
type ClusterVirtualMachineImage struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata; the image service mirrors type, capabilities and OS into labels.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says where the image comes from.
	Spec VirtualMachineImageSpec `json:"spec,omitempty"`

	// Status is what the image service learned about the image.
	Status VirtualMachineImageStatus `json:"status,omitempty"`
}

// ClusterVirtualMachineImageList is a list of cluster-wide images.
type ClusterVirtualMachineImageList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the images in the list.
	Items []ClusterVirtualMachineImage `json:"items"`
}

// VirtualMachineImageSpec says where an image comes from.
type VirtualMachineImageSpec struct {
	// ProviderRef references the object (a content library item) the image is read from.
	ProviderRef *LocalObjectRef `json:"providerRef,omitempty"`
}

// VirtualMachineImageStatus is what is known about an image.
type VirtualMachineImageStatus struct {
	// Name is the image's display name, which spec.imageName of a VM may use.
	Name string `json:"name,omitempty"`

	// Capabilities are the features the image declares, e.g. cloud-init.
	// +listType=set
	Capabilities []string `json:"capabilities,omitempty"`

	// Firmware is the firmware the image boots with.
	Firmware string `json:"firmware,omitempty"`

	// HardwareVersion is the image's virtual hardware version.
	HardwareVersion *int32 `json:"hardwareVersion,omitempty"`

	// OSInfo describes the image's guest operating system.
	OSInfo *VirtualMachineImageOSInfo `json:"osInfo,omitempty"`

	// OVFProperties are the OVF properties a VM may set through the vAppConfig bootstrap.
	OVFProperties []OVFProperty `json:"ovfProperties,omitempty"`

	// VMwareSystemProperties are the image's VMware system properties.
	VMwareSystemProperties []KeyValuePair `json:"vmwareSystemProperties,omitempty"`

	// ProductInfo describes the product packaged in the image.
	ProductInfo *VirtualMachineImageProductInfo `json:"productInfo,omitempty"`

	// Disks are the image's disks and where they are attached.
	// +listType=map
	// +listMapKey=name
	Disks []VirtualMachineImageDiskInfo `json:"disks,omitempty"`

	// ProviderContentVersion is the content version of the library item the image was read from.
	ProviderContentVersion string `json:"providerContentVersion,omitempty"`

	// ProviderItemID is the ID of the library item the image was read from.
	ProviderItemID string `json:"providerItemID,omitempty"`

	// Conditions report whether the image is ready to deploy from.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Type is the library item type: OVF, ISO or VM.
	Type string `json:"type,omitempty"`
}

// The image types a library item can have.
const (
	ImageTypeOVF = "OVF"
	ImageTypeISO = "ISO"
	ImageTypeVM  = "VM"
)

// VirtualMachineImageOSInfo describes an image's guest operating system.
type VirtualMachineImageOSInfo struct {
	// ID is the operating system's vSphere guest identifier.
	ID string `json:"id,omitempty"`

	// Type is the operating system's name, e.g. ubuntu.
	Type string `json:"type,omitempty"`

	// Version is the operating system's version.
	Version string `json:"version,omitempty"`
}

// VirtualMachineImageProductInfo describes the product packaged in an image.
type VirtualMachineImageProductInfo struct {
	// Product is the product's name.
	Product string `json:"product,omitempty"`

	// Vendor is who made the image.
	Vendor string `json:"vendor,omitempty"`

	// Version is the short version of the image.
	Version string `json:"version,omitempty"`

	// FullVersion is the long version of the image.
	FullVersion string `json:"fullVersion,omitempty"`
}

// OVFProperty is one OVF property an image declares.
type OVFProperty struct {
	// Key is the property's key.
	// +kubebuilder:validation:Required
	Key string `json:"key"`

	// Type is the property's OVF type, e.g. string.
	// +kubebuilder:validation:Required
	Type string `json:"type"`

	// Default is the property's default value.
	Default *string `json:"default,omitempty"`
}

// VirtualMachineImageDiskInfo is one disk of an image.
type VirtualMachineImageDiskInfo struct {
	// Name identifies the disk within the image.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// Limit is the disk's full capacity.
	Limit *resource.Quantity `json:"limit,omitempty"`

	// Requested is the least storage the disk needs.
	Requested *resource.Quantity `json:"requested,omitempty"`

	// ControllerType is the type of controller the disk is attached to.
	ControllerType ControllerType `json:"controllerType,omitempty"`

	// ControllerBusNumber is the bus number of the controller the disk is attached to.
	ControllerBusNumber *int32 `json:"controllerBusNumber,omitempty"`

	// UnitNumber is the disk's unit number on its controller.
	UnitNumber *int32 `json:"unitNumber,omitempty"`
}
