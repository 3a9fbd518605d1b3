package model

import "slices"

// Column is a printer column of a kind, as served in Kubernetes Table output.
type Column struct {
	// Name is the column header; Type is its OpenAPI type (string, integer, number, boolean or
	// date); JSONPath selects the value from the object; Description explains the column.
	Name, Type, JSONPath, Description string

	// Value, when set instead of JSONPath, computes the cell from the stored object's JSON:
	// for values no JSONPath can select, such as a status derived from spec and status.
	Value func(obj []byte) any

	// Priority 0 columns are always shown; higher ones only with -o wide.
	Priority int32
}

// Kind describes one kind the API serves: where it lives, how it is named and printed, and who
// may write it.
type Kind struct {
	// Group is the API group, "" for the core group served under /api/v1; Plural is the
	// resource name in paths and subjects.
	Group, Version, Kind, ListKind, Plural, Singular string

	// ShortNames are the aliases kubectl accepts, e.g. vm.
	ShortNames []string

	// Namespaced kinds live in namespaces; HasStatus kinds have a /status subresource;
	// PrivilegedWrite kinds may be written by privileged callers only; ReadOnly kinds
	// (the Events, see [EventKinds]) are served for get, list and watch only.
	Namespaced, HasStatus, PrivilegedWrite, ReadOnly bool

	// Columns are the printer columns, Age last (as kubectl prints them).
	Columns []Column

	// Owners are the services that must report an object of this kind released before the
	// gateway removes it on delete.
	Owners []string
}

// IsNamespace: a Namespace, whose deletion deletes everything in it first.
func (k Kind) IsNamespace() bool { return k.Group == GroupCore && k.Kind == "Namespace" }

// APIVersion is the kind's apiVersion: "v1" for the core group, else "group/version".
func (k Kind) APIVersion() string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

// The API groups and versions served.
const (
	GroupVMOperator = "vmoperator.vmware.com"
	GroupEncryption = "encryption.vmware.com"
	GroupPolicy     = "vsphere.policy.vmware.com"
	GroupStorage    = "storage.k8s.io"
	GroupCNS        = "cns.vmware.com"
	GroupCore       = ""

	VersionVMOperator = "v1alpha5"
	VersionEncryption = "v1alpha1"
	VersionPolicy     = "v1alpha1"
	VersionStorage    = "v1"
	VersionCNS        = "v1alpha1"
	VersionCore       = "v1"
)

// Kinds returns every kind the API serves. The result is the caller's to modify.
func Kinds() []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		k.ShortNames = slices.Clone(k.ShortNames)
		k.Columns = slices.Clone(k.Columns)
		k.Owners = slices.Clone(k.Owners)
		out[i] = k
	}
	return out
}

// KindFor returns the kind served under group and plural resource name.
func KindFor(group, plural string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.Group == group && k.Plural == plural {
			return k, true
		}
	}
	return Kind{}, false
}

// ageColumn ends every kind's columns, as kubectl does for built-in kinds.
var ageColumn = Column{
	Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
	Description: "Time since the object was created.",
}

// imageColumns are shared by namespaced and cluster images.
var imageColumns = []Column{
	{Name: "Display Name", Type: "string", JSONPath: ".status.name", Description: "Display name of the image in vSphere."},
	{Name: "Type", Type: "string", JSONPath: ".status.type", Description: "Library item type: OVF, ISO or VM."},
	{Name: "Image Version", Type: "string", JSONPath: ".status.productInfo.version", Description: "Version of the image's product."},
	{Name: "OS Name", Type: "string", JSONPath: ".status.osInfo.type", Description: "Guest operating system of the image."},
	{Name: "OS Version", Type: "string", JSONPath: ".status.osInfo.version", Description: "Version of the guest operating system."},
	{Name: "Hardware Version", Type: "string", JSONPath: ".status.hardwareVersion", Description: "Virtual hardware version of the image."},
}

var kinds = []Kind{
	{
		Group: GroupVMOperator, Version: VersionVMOperator, Kind: "VirtualMachine", ListKind: "VirtualMachineList",
		Plural: "virtualmachines", Singular: "virtualmachine", ShortNames: []string{"vm"},
		Namespaced: true, HasStatus: true,
		Columns: []Column{
			{Name: "Power-State", Type: "string", JSONPath: ".status.powerState", Description: "Observed power state."},
			{Name: "Status", Type: "string", Value: virtualMachineStatusCell, Description: "What the VM is doing, derived from spec and status: Creating, Starting, Running, Stopping, Stopped, Suspended, Restarting, Blocked, Deleting or Failed."},
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Description: "Status of the Ready condition, which spec.readinessProbe drives; empty for a VM without a probe."},
			{Name: "Class", Type: "string", JSONPath: ".spec.className", Description: "VirtualMachineClass of the VM.", Priority: 1},
			{Name: "Image", Type: "string", JSONPath: ".spec.image.name", Description: "Image the VM was deployed from.", Priority: 1},
			{Name: "Primary-IP4", Type: "string", JSONPath: ".status.network.primaryIP4", Description: "Primary IPv4 address.", Priority: 1},
			ageColumn,
		},
		Owners: []string{ServicePlacement, ServicePower, ServiceStorage, ServiceNetwork, ServiceCrypto},
	},
	{
		Group: GroupVMOperator, Version: VersionVMOperator, Kind: "VirtualMachineGroup", ListKind: "VirtualMachineGroupList",
		Plural: "virtualmachinegroups", Singular: "virtualmachinegroup", ShortNames: []string{"vmg"},
		Namespaced: true, HasStatus: true,
		Columns: []Column{
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Description: "Status of the Ready condition: every member linked, in the group's power state and placed."},
			{Name: "Placement", Type: "string", JSONPath: `.status.conditions[?(@.type=="PlacementReady")].message`, Description: "Where the members were placed (zone and host of each), or why some are not."},
			ageColumn,
		},
	},
	{
		Group: GroupVMOperator, Version: VersionVMOperator, Kind: "VirtualMachineClass", ListKind: "VirtualMachineClassList",
		Plural: "virtualmachineclasses", Singular: "virtualmachineclass", ShortNames: []string{"vmclass"},
		Namespaced: true, HasStatus: true, PrivilegedWrite: true,
		Columns: []Column{
			{Name: "CPU", Type: "string", JSONPath: ".spec.hardware.cpus", Description: "Number of virtual CPUs."},
			{Name: "Memory", Type: "string", JSONPath: ".spec.hardware.memory", Description: "Memory size."},
			{Name: "Capabilities", Type: "string", JSONPath: ".status.capabilities", Description: "Capabilities of the class.", Priority: 1},
			ageColumn,
		},
	},
	{
		Group: GroupVMOperator, Version: VersionVMOperator, Kind: "VirtualMachineClassInstance", ListKind: "VirtualMachineClassInstanceList",
		Plural: "virtualmachineclassinstances", Singular: "virtualmachineclassinstance", ShortNames: []string{"vmclassinstance"},
		Namespaced: true, HasStatus: true, PrivilegedWrite: true,
		Columns: []Column{
			{Name: "CPU", Type: "string", JSONPath: ".spec.hardware.cpus", Description: "Number of virtual CPUs."},
			{Name: "Memory", Type: "string", JSONPath: ".spec.hardware.memory", Description: "Memory size."},
			{Name: "Active", Type: "string", JSONPath: `.metadata.labels['vmoperator\.vmware\.com/active']`, Description: "Set on the instance new VMs of the class use."},
			ageColumn,
		},
	},
	{
		Group: GroupVMOperator, Version: VersionVMOperator, Kind: "VirtualMachineImage", ListKind: "VirtualMachineImageList",
		Plural: "virtualmachineimages", Singular: "virtualmachineimage", ShortNames: []string{"vmi", "vmimage"},
		Namespaced: true, HasStatus: true, PrivilegedWrite: true,
		Columns: append(slices.Clone(imageColumns),
			Column{Name: "Capabilities", Type: "string", JSONPath: ".status.capabilities", Description: "Features the image declares."},
			ageColumn),
	},
	{
		Group: GroupVMOperator, Version: VersionVMOperator, Kind: "ClusterVirtualMachineImage", ListKind: "ClusterVirtualMachineImageList",
		Plural: "clustervirtualmachineimages", Singular: "clustervirtualmachineimage",
		ShortNames: []string{"cvmi", "cvmimage", "clustervmi", "clustervmimage"},
		HasStatus:  true, PrivilegedWrite: true,
		Columns: append(slices.Clone(imageColumns), ageColumn),
	},
	{
		Group: GroupEncryption, Version: VersionEncryption, Kind: "EncryptionClass", ListKind: "EncryptionClassList",
		Plural: "encryptionclasses", Singular: "encryptionclass", ShortNames: []string{"encclass"},
		Namespaced: true, HasStatus: true, PrivilegedWrite: true,
		Columns: []Column{
			{Name: "KeyProvider", Type: "string", JSONPath: ".spec.keyProvider", Description: "Key provider that holds the key."},
			{Name: "KeyID", Type: "string", JSONPath: ".spec.keyID", Description: "Key used; empty means a generated key."},
			{Name: "Ready", Type: "string", Value: encryptionClassReadyCell, Description: "Whether vCenter has the key provider and key."},
			ageColumn,
		},
	},
	{
		Group: GroupPolicy, Version: VersionPolicy, Kind: "ComputePolicy", ListKind: "ComputePolicyList",
		Plural: "computepolicies", Singular: "computepolicy",
		Namespaced: true, HasStatus: true, PrivilegedWrite: true,
		Columns: []Column{
			{Name: "Enforcement-Mode", Type: "string", JSONPath: ".spec.enforcementMode", Description: "Mandatory or Optional."},
			{Name: "Description", Type: "string", JSONPath: ".spec.description", Description: "What the policy is for."},
			ageColumn,
		},
	},
	{
		Group: GroupPolicy, Version: VersionPolicy, Kind: "TagPolicy", ListKind: "TagPolicyList",
		Plural: "tagpolicies", Singular: "tagpolicy",
		Namespaced: true, HasStatus: true, PrivilegedWrite: true,
		Columns: []Column{ageColumn},
	},
	{
		Group: GroupStorage, Version: VersionStorage, Kind: "StorageClass", ListKind: "StorageClassList",
		Plural: "storageclasses", Singular: "storageclass", ShortNames: []string{"sc"},
		PrivilegedWrite: true,
		Columns: []Column{
			{Name: "Provisioner", Type: "string", JSONPath: ".provisioner", Description: "Volume plugin that provisions volumes."},
			{Name: "ReclaimPolicy", Type: "string", JSONPath: ".reclaimPolicy", Description: "What happens to a volume when its claim goes."},
			{Name: "VolumeBindingMode", Type: "string", JSONPath: ".volumeBindingMode", Description: "When volumes are bound."},
			{Name: "AllowVolumeExpansion", Type: "boolean", JSONPath: ".allowVolumeExpansion", Description: "Whether claims may grow."},
			ageColumn,
		},
	},
	{
		Group: GroupCore, Version: VersionCore, Kind: "PersistentVolumeClaim", ListKind: "PersistentVolumeClaimList",
		Plural: "persistentvolumeclaims", Singular: "persistentvolumeclaim", ShortNames: []string{"pvc"},
		Namespaced: true, HasStatus: true,
		// Storage deletes the claim's CNS volume once no VM uses it.
		Owners: []string{ServiceStorage},
		Columns: []Column{
			{Name: "Status", Type: "string", JSONPath: ".status.phase", Description: "Pending, Bound or Lost."},
			{Name: "Volume", Type: "string", JSONPath: ".spec.volumeName", Description: "Volume bound to the claim."},
			{Name: "Capacity", Type: "string", JSONPath: ".status.capacity.storage", Description: "Size of the bound volume."},
			{Name: "Access Modes", Type: "string", Value: claimAccessModes, Description: "Access modes of the bound volume."},
			{Name: "StorageClass", Type: "string", JSONPath: ".spec.storageClassName", Description: "StorageClass of the claim."},
			ageColumn,
		},
	},
	{
		Group: GroupCNS, Version: VersionCNS, Kind: "CnsRegisterVolume", ListKind: "CnsRegisterVolumeList",
		Plural: "cnsregistervolumes", Singular: "cnsregistervolume",
		Namespaced: true, HasStatus: true, PrivilegedWrite: true,
		Columns: []Column{
			{Name: "PVC", Type: "string", JSONPath: ".spec.pvcName", Description: "Claim bound to the registered volume."},
			{Name: "Registered", Type: "boolean", JSONPath: ".status.registered", Description: "Whether the disk is registered and the claim bound."},
			{Name: "Disk", Type: "string", JSONPath: ".spec.diskURLPath", Description: "The registered disk file.", Priority: 1},
			ageColumn,
		},
	},
	{
		Group: GroupCore, Version: VersionCore, Kind: "Namespace", ListKind: "NamespaceList",
		Plural: "namespaces", Singular: "namespace", ShortNames: []string{"ns"},
		HasStatus: true, PrivilegedWrite: true,
		Columns: []Column{
			{Name: "Status", Type: "string", JSONPath: ".status.phase", Description: "Active or Terminating."},
			ageColumn,
		},
	},
	{
		Group: GroupCore, Version: VersionCore, Kind: "Secret", ListKind: "SecretList",
		Plural: "secrets", Singular: "secret",
		Namespaced: true,
		Columns: []Column{
			{Name: "Type", Type: "string", JSONPath: ".type", Description: "How the data is used, e.g. Opaque."},
			{Name: "Data", Type: "integer", Value: dataCount, Description: "Number of keys in the data."},
			ageColumn,
		},
	},
	{
		Group: GroupCore, Version: VersionCore, Kind: "ConfigMap", ListKind: "ConfigMapList",
		Plural: "configmaps", Singular: "configmap", ShortNames: []string{"cm"},
		Namespaced: true,
		Columns: []Column{
			{Name: "Data", Type: "integer", Value: dataCount, Description: "Number of keys in the data."},
			ageColumn,
		},
	},
	{
		Group: GroupCore, Version: VersionCore, Kind: "ResourceQuota", ListKind: "ResourceQuotaList",
		Plural: "resourcequotas", Singular: "resourcequota", ShortNames: []string{"quota"},
		Namespaced: true, HasStatus: true, PrivilegedWrite: true,
		// kubectl prints quotas NAME AGE REQUEST LIMIT, the one kind whose Age is not last.
		Columns: []Column{
			ageColumn,
			{Name: "Request", Type: "string", Value: quotaColumn(false), Description: "Use and hard limit of each requests resource, e.g. requests.storage: 12Gi/50Gi."},
			{Name: "Limit", Type: "string", Value: quotaColumn(true), Description: "Use and hard limit of each limits resource."},
		},
	},
}
