package model

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// VirtualMachine is a virtual machine on vSphere: the configuration you ask for (spec) and
// what the services observe (status).
type VirtualMachine struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata: name, namespace, labels, annotations and the like.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the virtual machine.
	Spec VirtualMachineSpec `json:"spec,omitempty"`

	// Status is the observed state of the virtual machine, written only by the services.
	Status VirtualMachineStatus `json:"status,omitempty"`
}

// VirtualMachineList is a list of virtual machines.
type VirtualMachineList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata: resourceVersion and continue token.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the virtual machines in the list.
	Items []VirtualMachine `json:"items"`
}

// VirtualMachineSpec is the desired state of a virtual machine.
type VirtualMachineSpec struct {
	// Image references the VirtualMachineImage or ClusterVirtualMachineImage the VM is deployed
	// from by object name; it is filled in from imageName when left out.
	Image *ImageRef `json:"image,omitempty"`

	// ImageName names the image to deploy, either by object name or by its display name, which
	// must then resolve to exactly one image in the namespace or the cluster.
	ImageName string `json:"imageName,omitempty"`

	// ClassName names the VirtualMachineClass that supplies the VM's virtual hardware; changing
	// it resizes the VM.
	ClassName string `json:"className,omitempty"`

	// Class references a VirtualMachineClassInstance; it is kept as given and not used by vmop.
	Class *LocalObjectRef `json:"class,omitempty"`

	// Affinity holds the rules that place this VM relative to other VMs; it requires groupName.
	Affinity *AffinitySpec `json:"affinity,omitempty"`

	// Crypto describes how the VM is encrypted.
	Crypto *VirtualMachineCryptoSpec `json:"crypto,omitempty"`

	// StorageClass names the StorageClass whose storage policy places the VM's files and disks.
	StorageClass string `json:"storageClass,omitempty"`

	// Bootstrap describes how the guest operating system is customized on first boot.
	Bootstrap *VirtualMachineBootstrapSpec `json:"bootstrap,omitempty"`

	// Network describes the VM's network interfaces and guest network settings.
	Network *VirtualMachineNetworkSpec `json:"network,omitempty"`

	// PowerState is the power state the VM should be in: empty on create means PoweredOn;
	// it cannot be emptied on update.
	// +kubebuilder:validation:Enum=PoweredOn;PoweredOff;Suspended;""
	PowerState PowerState `json:"powerState,omitempty"`

	// PowerOffMode says how the VM is powered off: Hard, Soft (guest shutdown) or TrySoft.
	// +kubebuilder:default=TrySoft
	PowerOffMode PowerOpMode `json:"powerOffMode,omitempty"`

	// SuspendMode says how the VM is suspended: Hard, Soft (guest standby) or TrySoft.
	// +kubebuilder:default=TrySoft
	SuspendMode PowerOpMode `json:"suspendMode,omitempty"`

	// NextRestartTime restarts a powered-on VM when set to "now"; the gateway stores the
	// current time instead, and only "now" may be written.
	NextRestartTime string `json:"nextRestartTime,omitempty"`

	// RestartMode says how the VM is restarted: Hard (reset), Soft (guest reboot) or TrySoft.
	// +kubebuilder:default=TrySoft
	RestartMode PowerOpMode `json:"restartMode,omitempty"`

	// Volumes are the disks attached to the VM, each backed by a PersistentVolumeClaim.
	// +listType=map
	// +listMapKey=name
	Volumes []VirtualMachineVolume `json:"volumes,omitempty"`

	// ReadinessProbe decides when the VM counts as Ready.
	ReadinessProbe *VirtualMachineReadinessProbeSpec `json:"readinessProbe,omitempty"`

	// Advanced holds rarely needed VM settings.
	Advanced *VirtualMachineAdvancedSpec `json:"advanced,omitempty"`

	// Reserved holds settings reserved for the platform.
	Reserved *VirtualMachineReservedSpec `json:"reserved,omitempty"`

	// MinHardwareVersion is the lowest virtual hardware version the VM may have; it can only be
	// raised, and only while the VM is to be powered off.
	// +kubebuilder:validation:Minimum=13
	MinHardwareVersion int32 `json:"minHardwareVersion,omitempty"`

	// InstanceUUID is the vSphere instance UUID of the VM; a random one is chosen when empty.
	// +kubebuilder:validation:Format=uuid
	InstanceUUID string `json:"instanceUUID,omitempty"`

	// BiosUUID is the BIOS UUID the guest sees; a random one is chosen when empty.
	// +kubebuilder:validation:Format=uuid
	BiosUUID string `json:"biosUUID,omitempty"`

	// GuestID is the vSphere guest operating system identifier, e.g. ubuntu64Guest; required
	// when the VM has CD-ROMs.
	GuestID string `json:"guestID,omitempty"`

	// PromoteDisksMode says when linked-clone disks are promoted to full disks.
	// +kubebuilder:default=Online
	PromoteDisksMode PromoteDisksMode `json:"promoteDisksMode,omitempty"`

	// BootOptions controls firmware and boot behaviour; it takes effect at the next power-on.
	BootOptions *VirtualMachineBootOptions `json:"bootOptions,omitempty"`

	// CurrentSnapshotName names a VirtualMachineSnapshot to revert the VM to.
	CurrentSnapshotName string `json:"currentSnapshotName,omitempty"`

	// GroupName names the VirtualMachineGroup this VM belongs to.
	GroupName string `json:"groupName,omitempty"`

	// Hardware describes CD-ROMs and storage controllers.
	Hardware *VirtualMachineHardwareSpec `json:"hardware,omitempty"`

	// Policies lists the optional ComputePolicies to apply to this VM explicitly.
	Policies []LocalObjectRef `json:"policies,omitempty"`
}
