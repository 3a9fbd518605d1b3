package model

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// EncryptionClass names a key provider, and optionally a key, that VMs in its namespace are
// encrypted with.
type EncryptionClass struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata; the label encryption.vmware.com/default: "true" marks the
	// namespace's default class.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the key provider and key.
	Spec EncryptionClassSpec `json:"spec,omitempty"`

	// Status is the observed state of the class; it is empty.
	Status EncryptionClassStatus `json:"status,omitempty"`
}

// EncryptionClassList is a list of encryption classes.
type EncryptionClassList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the encryption classes in the list.
	Items []EncryptionClass `json:"items"`
}

// EncryptionClassSpec is the key provider and key of an encryption class.
type EncryptionClassSpec struct {
	// KeyProvider is the ID of the vSphere key provider.
	// +kubebuilder:validation:Required
	KeyProvider string `json:"keyProvider"`

	// KeyID is the ID of the key to use; empty has the provider generate a key.
	KeyID string `json:"keyID,omitempty"`
}

// EncryptionClassStatus is the observed state of an encryption class; it has no fields.
type EncryptionClassStatus struct{}

// DefaultEncryptionClassLabel marks the EncryptionClass used when a VM names none.
const DefaultEncryptionClassLabel = "encryption.vmware.com/default"
