package model

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CnsRegisterVolume (cns.vmware.com/v1alpha1) registers an existing virtual disk in place as
// a CNS volume bound to a PersistentVolumeClaim. The VM service creates one per image disk
// of a VM (api-rules §0.4, the schema upgrade), named and labelled like the claim it binds.
type CnsRegisterVolume struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the disk and the claim to bind it to.
	Spec CnsRegisterVolumeSpec `json:"spec,omitempty"`

	// Status says whether the disk is registered.
	Status CnsRegisterVolumeStatus `json:"status,omitempty"`
}

// CnsRegisterVolumeList is a list of CnsRegisterVolumes.
type CnsRegisterVolumeList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the CnsRegisterVolumes in the list.
	Items []CnsRegisterVolume `json:"items"`
}

// CnsRegisterVolumeSpec is the disk to register and the claim it becomes.
type CnsRegisterVolumeSpec struct {
	// PvcName is the PersistentVolumeClaim, in the same namespace, bound to the volume.
	// +kubebuilder:validation:Required
	PvcName string `json:"pvcName"`

	// VolumeID is the CNS volume the disk is registered as, once it is.
	VolumeID string `json:"volumeID,omitempty"`

	// AccessMode is the claim's access mode: ReadWriteMany for a multi-writer disk.
	AccessMode PersistentVolumeAccessMode `json:"accessMode,omitempty"`

	// DiskURLPath is the disk file: <datastore URL>/<path of the file in the datastore>.
	DiskURLPath string `json:"diskURLPath,omitempty"`

	// VolumeMode is the claim's volume mode, Filesystem or Block.
	// +kubebuilder:validation:Enum=Block;Filesystem
	VolumeMode string `json:"volumeMode,omitempty"`
}

// CnsRegisterVolumeStatus says whether the disk is registered.
type CnsRegisterVolumeStatus struct {
	// Registered is true once the disk is a CNS volume and the claim is bound to it.
	Registered bool `json:"registered"`

	// Error says why the registration failed.
	Error string `json:"error,omitempty"`
}
