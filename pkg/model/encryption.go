package model

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

	// Status says whether the key provider and key exist in vCenter.
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

// EncryptionClassStatus is the observed state of an encryption class.
type EncryptionClassStatus struct {
	// Conditions holds Ready: True when vCenter has the key provider and, if spec.keyID names
	// one, the key; False with reason KeyProviderNotFound or KeyNotFound otherwise.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Reasons of an EncryptionClass's Ready condition when False.
const (
	ReasonKeyProviderNotFound = "KeyProviderNotFound"
	ReasonKeyNotFound         = "KeyNotFound"
)

// encryptionClassReadyCell is the Ready column: the status of the Ready condition.
func encryptionClassReadyCell(obj []byte) any {
	var ec EncryptionClass
	if err := json.Unmarshal(obj, &ec); err != nil {
		return nil
	}
	for _, c := range ec.Status.Conditions {
		if c.Type == ConditionReady {
			return string(c.Status)
		}
	}
	return nil
}

// DefaultEncryptionClassLabel marks the EncryptionClass used when a VM names none.
const DefaultEncryptionClassLabel = "encryption.vmware.com/default"
