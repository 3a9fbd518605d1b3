package model

import "k8s.io/apimachinery/pkg/api/resource"

// VirtualMachineVolume is one disk of a VM and where it is attached.
type VirtualMachineVolume struct {
	// Name identifies the volume within the VM; new names must be DNS labels.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// PersistentVolumeClaim is the claim that backs the volume.
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`

	// Removable says whether the volume may be removed from the list; image disks are marked false.
	// +kubebuilder:default=true
	Removable *bool `json:"removable,omitempty"`

	// ApplicationType applies the disk and sharing modes a clustered application needs:
	// OracleRAC or MicrosoftWSFC.
	ApplicationType VolumeApplicationType `json:"applicationType,omitempty"`

	// ControllerBusNumber is the bus number of the controller the volume is attached to.
	ControllerBusNumber *int32 `json:"controllerBusNumber,omitempty"`

	// ControllerType is the type of controller the volume is attached to; SCSI when left empty.
	ControllerType ControllerType `json:"controllerType,omitempty"`

	// DiskMode says whether writes persist and whether the disk is part of snapshots.
	DiskMode VolumeDiskMode `json:"diskMode,omitempty"`

	// SharingMode says whether several VMs may write the disk at once.
	SharingMode VolumeSharingMode `json:"sharingMode,omitempty"`

	// UnitNumber is the volume's unit number on its controller; 7 is taken on SCSI controllers.
	UnitNumber *int32 `json:"unitNumber,omitempty"`
}

// PersistentVolumeClaimVolumeSource points a volume at a PersistentVolumeClaim.
type PersistentVolumeClaimVolumeSource struct {
	// ClaimName is the name of the PersistentVolumeClaim in the VM's namespace.
	// +kubebuilder:validation:Required
	ClaimName string `json:"claimName"`

	// ReadOnly mounts the claim read-only; not supported, it must stay false.
	ReadOnly bool `json:"readOnly,omitempty"`

	// InstanceVolumeClaim marks the claim as instance storage provided by the VM class.
	InstanceVolumeClaim *InstanceVolumeClaimVolumeSource `json:"instanceVolumeClaim,omitempty"`
}

// InstanceVolumeClaimVolumeSource describes an instance storage volume claimed as a PVC.
type InstanceVolumeClaimVolumeSource struct {
	// StorageClass names the StorageClass that provides the instance storage.
	// +kubebuilder:validation:Required
	StorageClass string `json:"storageClass"`

	// Size is the size of the instance storage volume.
	// +kubebuilder:validation:Required
	Size resource.Quantity `json:"size"`
}

// VolumeApplicationType names a clustered application whose disk conventions a volume follows.
// +kubebuilder:validation:Enum=OracleRAC;MicrosoftWSFC
type VolumeApplicationType string

// Oracle RAC shares disks multi-writer; Microsoft WSFC shares the SCSI bus physically.
const (
	VolumeApplicationTypeOracleRAC     VolumeApplicationType = "OracleRAC"
	VolumeApplicationTypeMicrosoftWSFC VolumeApplicationType = "MicrosoftWSFC"
)

// VolumeDiskMode says whether a disk's writes persist and whether snapshots include it.
// +kubebuilder:validation:Enum=Persistent;IndependentPersistent;NonPersistent;IndependentNonPersistent
type VolumeDiskMode string

// Independent disks are left out of snapshots; non-persistent disks lose writes at power-off.
const (
	VolumeDiskModePersistent               VolumeDiskMode = "Persistent"
	VolumeDiskModeIndependentPersistent    VolumeDiskMode = "IndependentPersistent"
	VolumeDiskModeNonPersistent            VolumeDiskMode = "NonPersistent"
	VolumeDiskModeIndependentNonPersistent VolumeDiskMode = "IndependentNonPersistent"
)

// VolumeSharingMode says whether a disk may be written by several VMs at once.
// +kubebuilder:validation:Enum=None;MultiWriter
type VolumeSharingMode string

// None keeps a disk to one VM; MultiWriter lets several VMs write it (needs ReadWriteMany).
const (
	VolumeSharingModeNone        VolumeSharingMode = "None"
	VolumeSharingModeMultiWriter VolumeSharingMode = "MultiWriter"
)

// VolumeType tells image disks (Classic) from PVC-backed volumes (Managed) in the status.
// +kubebuilder:validation:Enum=Classic;Managed
type VolumeType string

// Classic disks came with the image; Managed volumes were attached through spec.volumes.
const (
	VolumeTypeClassic VolumeType = "Classic"
	VolumeTypeManaged VolumeType = "Managed"
)

// VirtualMachineVolumeStatus is the observed state of one disk of a VM.
type VirtualMachineVolumeStatus struct {
	// Name is the volume's name in the spec, or the disk's name for image disks.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// ControllerBusNumber is the bus number of the controller the disk is on.
	ControllerBusNumber *int32 `json:"controllerBusNumber,omitempty"`

	// ControllerType is the type of controller the disk is on.
	ControllerType ControllerType `json:"controllerType,omitempty"`

	// UnitNumber is the disk's unit number on its controller.
	UnitNumber *int32 `json:"unitNumber,omitempty"`

	// Type says whether the disk came with the image (Classic) or is a PVC volume (Managed).
	// +kubebuilder:default=Managed
	Type VolumeType `json:"type"`

	// DiskMode is the disk's observed disk mode.
	DiskMode VolumeDiskMode `json:"diskMode,omitempty"`

	// SharingMode is the disk's observed sharing mode.
	SharingMode VolumeSharingMode `json:"sharingMode,omitempty"`

	// Crypto tells which key encrypts the disk; absent for unencrypted disks.
	Crypto *VirtualMachineVolumeCryptoStatus `json:"crypto,omitempty"`

	// Limit is the disk's maximum capacity.
	Limit *resource.Quantity `json:"limit,omitempty"`

	// Requested is the capacity the disk requests; it counts against the storage quota.
	Requested *resource.Quantity `json:"requested,omitempty"`

	// Used is the space the disk takes on the datastore, not counting shared parents.
	Used *resource.Quantity `json:"used,omitempty"`

	// Attached is true once the disk is attached to the VM.
	Attached bool `json:"attached,omitempty"`

	// DiskUUID is the UUID of the virtual disk.
	DiskUUID string `json:"diskUUID,omitempty"`

	// Error is the last error seen attaching or detaching the disk.
	Error string `json:"error,omitempty"`
}

// VirtualMachineVolumeCryptoStatus tells which key encrypts a disk.
type VirtualMachineVolumeCryptoStatus struct {
	// ProviderID is the key provider that holds the disk's key.
	ProviderID string `json:"providerID,omitempty"`

	// KeyID is the ID of the disk's key.
	KeyID string `json:"keyID,omitempty"`
}

// VirtualMachineStorageStatus sums up a VM's storage use.
type VirtualMachineStorageStatus struct {
	// Total is what the VM charges against the namespace's storage quota: requested.disks plus
	// usage.other.
	Total *resource.Quantity `json:"total,omitempty"`

	// Requested is the capacity requested by the VM's image disks.
	Requested *VirtualMachineStorageStatusRequested `json:"requested,omitempty"`

	// Usage is the space the VM's files take on the datastores.
	Usage *VirtualMachineStorageStatusUsage `json:"usage,omitempty"`
}

// VirtualMachineStorageStatusRequested is the capacity requested by a VM's image disks.
type VirtualMachineStorageStatusRequested struct {
	// Disks is the summed requested capacity of the image disks.
	Disks *resource.Quantity `json:"disks,omitempty"`
}

// VirtualMachineStorageStatusUsage is the space a VM's files take on the datastores.
type VirtualMachineStorageStatusUsage struct {
	// Disks is the space taken by the image disks.
	Disks *resource.Quantity `json:"disks,omitempty"`

	// Snapshots is the space taken by snapshots; not reported by vmop.
	Snapshots *VirtualMachineStorageStatusUsageSnapshots `json:"snapshots,omitempty"`

	// Other is the space taken by every other file: configuration, logs, swap, snapshot files.
	Other *resource.Quantity `json:"other,omitempty"`
}

// VirtualMachineStorageStatusUsageSnapshots splits snapshot space into VM and volume snapshots.
type VirtualMachineStorageStatusUsageSnapshots struct {
	// VM is the space taken by VM snapshots, including memory files and delta disks.
	VM *resource.Quantity `json:"vm,omitempty"`

	// Volume is the space taken by volume snapshots.
	Volume *resource.Quantity `json:"volume,omitempty"`
}
