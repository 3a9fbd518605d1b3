package model

// PowerState is a VM's power state, either desired (spec) or observed (status).
// +kubebuilder:validation:Enum=PoweredOn;PoweredOff;Suspended
type PowerState string

// The power states a VM or group can be asked for or observed in.
const (
	PowerStateOn        PowerState = "PoweredOn"
	PowerStateOff       PowerState = "PoweredOff"
	PowerStateSuspended PowerState = "Suspended"
)

// PowerOpMode says how a power-off, suspend or restart is carried out.
// +kubebuilder:validation:Enum=Hard;Soft;TrySoft
type PowerOpMode string

// Hard acts without the guest, Soft asks the guest through VMware Tools, TrySoft asks the
// guest first and acts hard if the guest has not complied within five minutes.
const (
	PowerOpModeHard    PowerOpMode = "Hard"
	PowerOpModeSoft    PowerOpMode = "Soft"
	PowerOpModeTrySoft PowerOpMode = "TrySoft"
)

// PromoteDisksMode says whether and when linked-clone disks are promoted to full disks.
// +kubebuilder:validation:Enum=Online;Offline;Disabled
type PromoteDisksMode string

// Online promotes while the VM runs, Offline only while it is powered off, Disabled never.
const (
	PromoteDisksModeOnline   PromoteDisksMode = "Online"
	PromoteDisksModeOffline  PromoteDisksMode = "Offline"
	PromoteDisksModeDisabled PromoteDisksMode = "Disabled"
)
