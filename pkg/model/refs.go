package model

// LocalObjectRef points at an object in the referrer's namespace by API version, kind and name.
type LocalObjectRef struct {
	// APIVersion is the group/version of the referenced object, e.g. vmoperator.vmware.com/v1alpha5.
	// +kubebuilder:validation:Required
	APIVersion string `json:"apiVersion"`

	// Kind is the kind of the referenced object, e.g. VirtualMachineClass.
	// +kubebuilder:validation:Required
	Kind string `json:"kind"`

	// Name is the object name of the referenced object.
	// +kubebuilder:validation:Required
	Name string `json:"name"`
}

// PartialObjectRef points at an object in the referrer's namespace; API version and kind may be
// left out when the context implies them.
type PartialObjectRef struct {
	// APIVersion is the group/version of the referenced object; empty means the context's default.
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind is the kind of the referenced object; empty means the context's default.
	Kind string `json:"kind,omitempty"`

	// Name is the object name of the referenced object; empty means the context's default object.
	Name string `json:"name,omitempty"`
}

// ImageRef points at a VirtualMachineImage in the VM's namespace or at a ClusterVirtualMachineImage.
type ImageRef struct {
	// Kind is VirtualMachineImage (namespaced) or ClusterVirtualMachineImage (cluster-wide).
	Kind string `json:"kind,omitempty"`

	// Name is the object name of the image (not its display name).
	// +kubebuilder:validation:Required
	Name string `json:"name"`
}

// SecretKeySelector selects one key of a Secret in the referrer's namespace.
type SecretKeySelector struct {
	// Name is the name of the Secret.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// Key is the key within the Secret whose value is used.
	// +kubebuilder:validation:Required
	Key string `json:"key"`
}

// PasswordSecretKeySelector selects a password stored in a Secret; the key defaults to "password".
type PasswordSecretKeySelector struct {
	// Name is the name of the Secret holding the password.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// Key is the key within the Secret that holds the password.
	// +kubebuilder:default=password
	Key string `json:"key,omitempty"`
}

// ValueOrSecretKeySelector gives a value either inline or by reference to a Secret key.
type ValueOrSecretKeySelector struct {
	// From takes the value from a Secret key; it may not be combined with value.
	From *SecretKeySelector `json:"from,omitempty"`

	// Value is the value written inline; it may not be combined with from.
	Value *string `json:"value,omitempty"`
}

// KeyValuePair is one entry of a map written as a list.
type KeyValuePair struct {
	// Key is the entry's key.
	// +kubebuilder:validation:Required
	Key string `json:"key"`

	// Value is the entry's value.
	Value string `json:"value,omitempty"`
}

// KeyValueOrSecretKeySelectorPair is one entry of a map written as a list whose value may come
// from a Secret.
type KeyValueOrSecretKeySelectorPair struct {
	// Key is the entry's key.
	// +kubebuilder:validation:Required
	Key string `json:"key"`

	// Value is the entry's value, inline or from a Secret key.
	Value *ValueOrSecretKeySelector `json:"value,omitempty"`
}
