package model

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Secret (core v1) holds values a VM's bootstrap refers to by name and key: passwords,
// cloud-init user data, unattend files, vApp properties. Its values are never logged,
// announced, traced or kept in plain text by the read model.
type Secret struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Data maps keys to base64-encoded values.
	Data map[string][]byte `json:"data,omitempty"`

	// StringData maps keys to plain values; it is merged into data on write (and wins over
	// it) and never stored.
	StringData map[string]string `json:"stringData,omitempty"`

	// Type says how the data is used, e.g. Opaque.
	Type string `json:"type,omitempty"`

	// Immutable, when true, forbids changing the data.
	Immutable *bool `json:"immutable,omitempty"`
}

// SecretList is a list of secrets.
type SecretList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the secrets in the list.
	Items []Secret `json:"items"`
}

// ConfigMap (core v1) holds plain configuration data.
type ConfigMap struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Data maps keys to UTF-8 values.
	Data map[string]string `json:"data,omitempty"`

	// BinaryData maps keys to base64-encoded binary values.
	BinaryData map[string][]byte `json:"binaryData,omitempty"`

	// Immutable, when true, forbids changing the data.
	Immutable *bool `json:"immutable,omitempty"`
}

// ConfigMapList is a list of config maps.
type ConfigMapList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the config maps in the list.
	Items []ConfigMap `json:"items"`
}

// SecretOpaque is the default type of a Secret.
const SecretOpaque = "Opaque"

// MaxSecretSize is the most data a Secret or ConfigMap may hold, as in Kubernetes: 1 MiB.
const MaxSecretSize = 1 << 20

// dataCount is the Data printer column of Secrets and ConfigMaps: how many keys they hold.
func dataCount(obj []byte) any {
	var o struct {
		Data       map[string]json.RawMessage `json:"data"`
		BinaryData map[string]json.RawMessage `json:"binaryData"`
	}
	if json.Unmarshal(obj, &o) != nil {
		return nil
	}
	return len(o.Data) + len(o.BinaryData)
}
