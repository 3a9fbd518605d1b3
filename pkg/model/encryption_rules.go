package model

import "k8s.io/apimachinery/pkg/util/validation/field"

// ValidateEncryptionClass is stage 3 for EncryptionClasses (api-rules §9.4): the key
// provider is required. The schema already reports a missing spec.keyProvider member, but
// not an absent spec nor an empty provider, and a class without a provider can encrypt
// nothing (§0.1: Required covers missing and empty values). old is nil on create.
func ValidateEncryptionClass(class, _ *EncryptionClass) field.ErrorList {
	if class.Spec.KeyProvider == "" {
		return field.ErrorList{field.Required(field.NewPath("spec", "keyProvider"), "must name the vSphere key provider that encrypts VMs of this class")}
	}
	return nil
}
