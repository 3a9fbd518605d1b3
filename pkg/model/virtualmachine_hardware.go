package model

import "k8s.io/apimachinery/pkg/api/resource"

// VirtualMachineHardwareSpec describes a VM's CD-ROMs and storage controllers.
type VirtualMachineHardwareSpec struct {
	// Cdrom lists the VM's CD-ROM drives, each backed by an ISO image.
	// +listType=map
	// +listMapKey=name
	Cdrom []VirtualMachineCdromSpec `json:"cdrom,omitempty"`

	// IDEControllers lists the IDE controllers; buses 0 and 1 are added when empty.
	// +listType=map
	// +listMapKey=busNumber
	// +kubebuilder:validation:MaxItems=2
	IDEControllers []IDEControllerSpec `json:"ideControllers,omitempty"`

	// NVMEControllers lists the NVMe controllers.
	// +listType=map
	// +listMapKey=busNumber
	// +kubebuilder:validation:MaxItems=4
	NVMEControllers []NVMEControllerSpec `json:"nvmeControllers,omitempty"`

	// SATAControllers lists the SATA (AHCI) controllers.
	// +listType=map
	// +listMapKey=busNumber
	// +kubebuilder:validation:MaxItems=4
	SATAControllers []SATAControllerSpec `json:"sataControllers,omitempty"`

	// SCSIControllers lists the SCSI controllers.
	// +listType=map
	// +listMapKey=busNumber
	// +kubebuilder:validation:MaxItems=4
	SCSIControllers []SCSIControllerSpec `json:"scsiControllers,omitempty"`
}

// VirtualMachineCdromSpec is one CD-ROM drive of a VM.
type VirtualMachineCdromSpec struct {
	// Name identifies the drive within the VM: at least two lower-case letters or digits.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^[a-z0-9]{2,}$`
	Name string `json:"name"`

	// Image references the ISO-type image in the drive; kind defaults to VirtualMachineImage.
	// +kubebuilder:validation:Required
	Image ImageRef `json:"image"`

	// ControllerBusNumber is the bus number of the IDE or SATA controller the drive is on.
	ControllerBusNumber *int32 `json:"controllerBusNumber,omitempty"`

	// ControllerType is the type of controller the drive is on: IDE or SATA.
	// +kubebuilder:validation:Enum=IDE;SATA
	ControllerType ControllerType `json:"controllerType,omitempty"`

	// UnitNumber is the drive's unit number on its controller; the next free one when empty.
	UnitNumber *int32 `json:"unitNumber,omitempty"`

	// Connected says whether the ISO is inserted.
	// +kubebuilder:default=true
	Connected *bool `json:"connected,omitempty"`

	// AllowGuestControl lets the guest connect and disconnect the drive.
	// +kubebuilder:default=true
	AllowGuestControl *bool `json:"allowGuestControl,omitempty"`
}

// ControllerType is a kind of storage controller.
// +kubebuilder:validation:Enum=IDE;NVME;SATA;SCSI
type ControllerType string

// The storage controller types a VM may have.
const (
	ControllerTypeIDE  ControllerType = "IDE"
	ControllerTypeNVME ControllerType = "NVME"
	ControllerTypeSATA ControllerType = "SATA"
	ControllerTypeSCSI ControllerType = "SCSI"
)

// ControllerSharingMode says whether a controller's bus is shared with other VMs.
type ControllerSharingMode string

// None: not shared; Physical: shared across hosts (e.g. WSFC); Virtual: shared on one host (SCSI only).
const (
	ControllerSharingModeNone     ControllerSharingMode = "None"
	ControllerSharingModePhysical ControllerSharingMode = "Physical"
	ControllerSharingModeVirtual  ControllerSharingMode = "Virtual"
)

// SCSIControllerType is the adapter model of a SCSI controller.
// +kubebuilder:validation:Enum=ParaVirtual;BusLogic;LsiLogic;LsiLogicSAS
type SCSIControllerType string

// ParaVirtual offers 64 disks per controller, the others 15.
const (
	SCSIControllerTypeParaVirtual SCSIControllerType = "ParaVirtual"
	SCSIControllerTypeBusLogic    SCSIControllerType = "BusLogic"
	SCSIControllerTypeLsiLogic    SCSIControllerType = "LsiLogic"
	SCSIControllerTypeLsiLogicSAS SCSIControllerType = "LsiLogicSAS"
)

// IDEControllerSpec is one IDE controller.
type IDEControllerSpec struct {
	// BusNumber is the controller's bus number.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	BusNumber int32 `json:"busNumber"`
}

// NVMEControllerSpec is one NVMe controller.
type NVMEControllerSpec struct {
	// BusNumber is the controller's bus number.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3
	BusNumber int32 `json:"busNumber"`

	// SharingMode says whether the bus is shared with other VMs: None or Physical.
	// +kubebuilder:validation:Enum=None;Physical
	// +kubebuilder:default=None
	SharingMode ControllerSharingMode `json:"sharingMode,omitempty"`
}

// SATAControllerSpec is one SATA (AHCI) controller.
type SATAControllerSpec struct {
	// BusNumber is the controller's bus number.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3
	BusNumber int32 `json:"busNumber"`
}

// SCSIControllerSpec is one SCSI controller.
type SCSIControllerSpec struct {
	// BusNumber is the controller's bus number.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3
	BusNumber int32 `json:"busNumber"`

	// SharingMode says whether the bus is shared with other VMs: None, Physical or Virtual.
	// +kubebuilder:validation:Enum=None;Physical;Virtual
	// +kubebuilder:default=None
	SharingMode ControllerSharingMode `json:"sharingMode,omitempty"`

	// Type is the SCSI adapter model.
	// +kubebuilder:default=ParaVirtual
	Type SCSIControllerType `json:"type,omitempty"`
}

// VirtualMachineHardwareStatus is a VM's observed virtual hardware.
type VirtualMachineHardwareStatus struct {
	// Controllers are the VM's storage controllers and the devices on them.
	// +listType=map
	// +listMapKey=busNumber
	// +listMapKey=type
	Controllers []VirtualControllerStatus `json:"controllers,omitempty"`

	// CPU is the VM's virtual CPU configuration.
	CPU *VirtualMachineCPUAllocationStatus `json:"cpu,omitempty"`

	// Memory is the VM's memory configuration.
	Memory *VirtualMachineMemoryAllocationStatus `json:"memory,omitempty"`

	// VGPUs are the VM's virtual GPUs.
	VGPUs []VirtualMachineHardwareVGPUStatus `json:"vGPUs,omitempty"`
}

// VirtualControllerStatus is one observed storage controller.
type VirtualControllerStatus struct {
	// BusNumber is the controller's bus number.
	// +kubebuilder:validation:Required
	BusNumber int32 `json:"busNumber"`

	// Type is the controller's type.
	// +kubebuilder:validation:Required
	Type ControllerType `json:"type"`

	// DeviceKey is the controller's vSphere device key.
	// +kubebuilder:validation:Required
	DeviceKey int32 `json:"deviceKey"`

	// Devices are the disks and CD-ROMs on the controller.
	// +listType=map
	// +listMapKey=unitNumber
	Devices []VirtualDeviceStatus `json:"devices,omitempty"`
}

// VirtualDeviceStatus is one device observed on a controller.
type VirtualDeviceStatus struct {
	// Type is the device's type: CDROM or Disk.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=CDROM;Disk
	Type string `json:"type"`

	// UnitNumber is the device's unit number on the controller.
	// +kubebuilder:validation:Required
	UnitNumber int32 `json:"unitNumber"`

	// Name is the spec.hardware.cdrom entry a CD-ROM stands for; empty for a CD-ROM that
	// no entry names.
	Name string `json:"name,omitempty"`

	// FileName is the datastore path of the ISO file backing a CD-ROM.
	FileName string `json:"fileName,omitempty"`

	// Connected says whether a CD-ROM is connected now; a powered-off VM's never is.
	Connected *bool `json:"connected,omitempty"`

	// StartConnected says whether a CD-ROM connects when the VM powers on.
	StartConnected *bool `json:"startConnected,omitempty"`

	// AllowGuestControl says whether the guest may connect and disconnect a CD-ROM.
	AllowGuestControl *bool `json:"allowGuestControl,omitempty"`
}

// The device types reported on a controller.
const (
	DeviceTypeCDROM = "CDROM"
	DeviceTypeDisk  = "Disk"
)

// VirtualMachineCPUAllocationStatus is a VM's observed CPU configuration.
type VirtualMachineCPUAllocationStatus struct {
	// Total is the number of virtual CPUs.
	Total int32 `json:"total,omitempty"`

	// Reservation is the guaranteed CPU bandwidth in MHz.
	Reservation int64 `json:"reservation,omitempty"`
}

// VirtualMachineMemoryAllocationStatus is a VM's observed memory configuration.
type VirtualMachineMemoryAllocationStatus struct {
	// Total is the configured memory size.
	Total *resource.Quantity `json:"total,omitempty"`

	// Reservation is the guaranteed amount of memory.
	Reservation *resource.Quantity `json:"reservation,omitempty"`
}

// VirtualMachineHardwareVGPUStatus is one observed virtual GPU.
type VirtualMachineHardwareVGPUStatus struct {
	// Type is the vGPU vendor type; only Nvidia is reported.
	Type string `json:"type,omitempty"`

	// Profile is the vGPU profile, e.g. grid_p40-1q.
	Profile string `json:"profile,omitempty"`

	// MigrationType tells how the vGPU supports vMotion: None, Normal or Enhanced.
	MigrationType string `json:"migrationType,omitempty"`
}

// The vGPU type and migration types reported in the status.
const (
	VGPUTypeNvidia = "Nvidia"

	VGPUMigrationNone     = "None"
	VGPUMigrationNormal   = "Normal"
	VGPUMigrationEnhanced = "Enhanced"
)
