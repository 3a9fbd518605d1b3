package model

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceList maps resource names (e.g. storage, requests.storage) to quantities.
type ResourceList map[string]resource.Quantity

// StorageClass (storage.k8s.io/v1) names a vSphere storage policy that VMs and volumes are
// placed with.
type StorageClass struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Provisioner names the volume plugin that provisions volumes of this class.
	// +kubebuilder:validation:Required
	Provisioner string `json:"provisioner"`

	// Parameters are the provisioner's settings; storagePolicyID is the vSphere SPBM profile ID.
	Parameters map[string]string `json:"parameters,omitempty"`

	// ReclaimPolicy says what happens to a volume when its claim is deleted: Delete or Retain.
	// +kubebuilder:validation:Enum=Delete;Retain
	ReclaimPolicy string `json:"reclaimPolicy,omitempty"`

	// VolumeBindingMode says when volumes are bound: Immediate or WaitForFirstConsumer.
	// +kubebuilder:validation:Enum=Immediate;WaitForFirstConsumer
	VolumeBindingMode string `json:"volumeBindingMode,omitempty"`

	// AllowVolumeExpansion says whether claims of this class may grow.
	AllowVolumeExpansion *bool `json:"allowVolumeExpansion,omitempty"`
}

// VolumeBindingWaitForFirstConsumer is the binding mode under which a claim gets its volume
// only once a VM names it.
const VolumeBindingWaitForFirstConsumer = "WaitForFirstConsumer"

// StorageClassList is a list of storage classes.
type StorageClassList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the storage classes in the list.
	Items []StorageClass `json:"items"`
}

// StoragePolicyIDParameter is the StorageClass parameter that holds the vSphere SPBM profile ID.
const StoragePolicyIDParameter = "storagePolicyID"

// PersistentVolumeClaim (core v1) is a request for a volume, which VMs attach through spec.volumes.
type PersistentVolumeClaim struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the requested volume.
	Spec PersistentVolumeClaimSpec `json:"spec,omitempty"`

	// Status is the observed state of the claim.
	Status PersistentVolumeClaimStatus `json:"status,omitempty"`
}

// PersistentVolumeClaimList is a list of persistent volume claims.
type PersistentVolumeClaimList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the claims in the list.
	Items []PersistentVolumeClaim `json:"items"`
}

// PersistentVolumeClaimSpec is the volume a claim requests.
type PersistentVolumeClaimSpec struct {
	// AccessModes are the ways the volume may be mounted.
	AccessModes []PersistentVolumeAccessMode `json:"accessModes,omitempty"`

	// Resources are the requested and limiting sizes, e.g. requests.storage.
	Resources *VolumeResourceRequirements `json:"resources,omitempty"`

	// StorageClassName names the StorageClass the volume is provisioned with.
	StorageClassName *string `json:"storageClassName,omitempty"`

	// VolumeName is the name of the PersistentVolume bound to the claim.
	VolumeName string `json:"volumeName,omitempty"`

	// VolumeMode is Filesystem or Block.
	// +kubebuilder:validation:Enum=Block;Filesystem
	VolumeMode string `json:"volumeMode,omitempty"`

	// DataSourceRef names the object the volume is populated from, e.g. the VM whose image disk
	// it registers.
	DataSourceRef *TypedObjectReference `json:"dataSourceRef,omitempty"`
}

// PersistentVolumeAccessMode is a way a volume may be mounted.
// +kubebuilder:validation:Enum=ReadWriteOnce;ReadOnlyMany;ReadWriteMany;ReadWriteOncePod
type PersistentVolumeAccessMode string

// The access modes of a volume.
const (
	AccessModeReadWriteOnce    PersistentVolumeAccessMode = "ReadWriteOnce"
	AccessModeReadOnlyMany     PersistentVolumeAccessMode = "ReadOnlyMany"
	AccessModeReadWriteMany    PersistentVolumeAccessMode = "ReadWriteMany"
	AccessModeReadWriteOncePod PersistentVolumeAccessMode = "ReadWriteOncePod"
)

// VolumeResourceRequirements are the requested and limiting sizes of a volume.
type VolumeResourceRequirements struct {
	// Requests are the least resources the volume must have, e.g. storage: 8Gi.
	Requests ResourceList `json:"requests,omitempty"`

	// Limits are the most resources the volume may have.
	Limits ResourceList `json:"limits,omitempty"`
}

// TypedObjectReference names an object by API group, kind and name.
type TypedObjectReference struct {
	// APIGroup is the group of the referenced object; empty for the core group.
	APIGroup *string `json:"apiGroup,omitempty"`

	// Kind is the kind of the referenced object.
	// +kubebuilder:validation:Required
	Kind string `json:"kind"`

	// Name is the name of the referenced object.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// Namespace is the namespace of the referenced object; the claim's namespace when empty.
	Namespace *string `json:"namespace,omitempty"`
}

// PersistentVolumeClaimStatus is the observed state of a claim.
type PersistentVolumeClaimStatus struct {
	// Phase is Pending, Bound or Lost.
	// +kubebuilder:validation:Enum=Pending;Bound;Lost
	Phase string `json:"phase,omitempty"`

	// AccessModes are the access modes of the bound volume.
	AccessModes []PersistentVolumeAccessMode `json:"accessModes,omitempty"`

	// Capacity is the size of the bound volume.
	Capacity ResourceList `json:"capacity,omitempty"`

	// Conditions say what holds the claim back: a deletion waiting for the VMs that use
	// it, a resize that cannot happen.
	Conditions []PersistentVolumeClaimCondition `json:"conditions,omitempty"`
}

// PersistentVolumeClaimCondition is one condition of a claim, as Kubernetes spells it.
type PersistentVolumeClaimCondition struct {
	// Type is the condition's name, e.g. InUse or Resizing.
	Type string `json:"type"`

	// Status is True, False or Unknown.
	Status metav1.ConditionStatus `json:"status"`

	// LastTransitionTime is when the status last changed.
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`

	// Reason is a CamelCase word for why.
	Reason string `json:"reason,omitempty"`

	// Message explains the condition to a person.
	Message string `json:"message,omitempty"`
}

// The phases of a claim.
const (
	ClaimPending = "Pending"
	ClaimBound   = "Bound"
	ClaimLost    = "Lost"
)

// Namespace (core v1) is a named scope for namespaced objects.
type Namespace struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the namespace's finalizers.
	Spec NamespaceSpec `json:"spec,omitempty"`

	// Status is the observed state of the namespace.
	Status NamespaceStatus `json:"status,omitempty"`
}

// NamespaceList is a list of namespaces.
type NamespaceList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the namespaces in the list.
	Items []Namespace `json:"items"`
}

// NamespaceSpec is the desired state of a namespace.
type NamespaceSpec struct {
	// Finalizers must all be removed before the namespace is deleted for good.
	Finalizers []string `json:"finalizers,omitempty"`
}

// NamespaceStatus is the observed state of a namespace.
type NamespaceStatus struct {
	// Phase is Active or Terminating.
	// +kubebuilder:validation:Enum=Active;Terminating
	Phase string `json:"phase,omitempty"`
}

// The phases of a namespace.
const (
	NamespaceActive      = "Active"
	NamespaceTerminating = "Terminating"
)

// ResourceQuota (core v1) caps what a namespace may consume, e.g. requests.storage.
type ResourceQuota struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the set of hard limits.
	Spec ResourceQuotaSpec `json:"spec,omitempty"`

	// Status is the enforced limits and current usage.
	Status ResourceQuotaStatus `json:"status,omitempty"`
}

// ResourceQuotaList is a list of resource quotas.
type ResourceQuotaList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the quotas in the list.
	Items []ResourceQuota `json:"items"`
}

// ResourceQuotaSpec is the desired limits of a quota.
type ResourceQuotaSpec struct {
	// Hard are the limits per resource name.
	Hard ResourceList `json:"hard,omitempty"`
}

// ResourceQuotaStatus is the enforced limits and usage of a quota.
type ResourceQuotaStatus struct {
	// Hard are the limits being enforced.
	Hard ResourceList `json:"hard,omitempty"`

	// Used is the current usage per resource name.
	Used ResourceList `json:"used,omitempty"`
}
