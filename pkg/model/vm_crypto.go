package model

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// EncryptionEnabledLabel on a StorageClass is the storage service's record that the class's
// SPBM profile has the encryption capability (api-rules §9.6): an encryption storage class.
const EncryptionEnabledLabel = "encryption.vmware.com/enabled"

// isEncryptionStorageClass tells whether sc is an encryption storage class.
func isEncryptionStorageClass(sc *StorageClass) bool {
	return sc != nil && sc.Labels[EncryptionEnabledLabel] == "true"
}

// encryptionStorageClass looks the named class up and tells whether it is one; an absent
// class is not.
func encryptionStorageClass(l Lookup, name string) (bool, error) {
	if name == "" {
		return false, nil
	}
	sc, found, err := l.StorageClass(name)
	if err != nil {
		return false, fmt.Errorf("look up storage class %s: %w", name, err)
	}
	return found && isEncryptionStorageClass(sc), nil
}

var encryptionClassNamePath = specPath.Child("crypto", "encryptionClassName")

// validateCrypto is CRY-3: an EncryptionClass encrypts only through an encryption storage
// class. CRY-2 (crypto while BYOK is off) cannot fire: BYOK is on in our baseline.
func validateCrypto(r *vmReq) field.ErrorList {
	c := r.New.Spec.Crypto
	if c == nil || c.EncryptionClassName == "" {
		return nil
	}
	sc := r.New.Spec.StorageClass
	if sc == "" {
		return field.ErrorList{field.Invalid(encryptionClassNamePath, c.EncryptionClassName, "requires spec.storageClass to be an encryption storage class")}
	}
	ok, err := encryptionStorageClass(r.Env.Lookup, sc)
	if err != nil {
		return field.ErrorList{field.InternalError(encryptionClassNamePath, err)}
	}
	if !ok {
		return field.ErrorList{field.Invalid(encryptionClassNamePath, c.EncryptionClassName, "storage class "+sc+" is not an encryption storage class")}
	}
	return nil
}

// defaultEncryptionClass is D10: a VM on an encryption storage class that names no
// EncryptionClass gets the namespace's default one, if there is exactly one.
func defaultEncryptionClass(vm *VirtualMachine, env VMEnv) *field.Error {
	s := &vm.Spec
	if s.Crypto != nil && s.Crypto.EncryptionClassName != "" {
		return nil
	}
	ok, err := encryptionStorageClass(env.Lookup, s.StorageClass)
	if err != nil {
		return field.InternalError(encryptionClassNamePath, err)
	}
	if !ok {
		return nil
	}
	classes, err := env.Lookup.EncryptionClasses(vm.Namespace)
	if err != nil {
		return field.InternalError(encryptionClassNamePath, fmt.Errorf("list encryption classes: %w", err))
	}
	var defaults []string
	for _, ec := range classes {
		if ec.Labels[DefaultEncryptionClassLabel] == "true" {
			defaults = append(defaults, ec.Name)
		}
	}
	switch len(defaults) {
	case 0:
		return nil
	case 1:
	default:
		return field.Invalid(encryptionClassNamePath, "", "the namespace has several default encryption classes: "+strings.Join(defaults, ", "))
	}
	if s.Crypto == nil {
		// D1 has already run, so the new section gets its schema defaults here.
		useDefault := true
		s.Crypto = &VirtualMachineCryptoSpec{UseDefaultKeyProvider: &useDefault, VTPMMode: VTPMModeNew}
	}
	s.Crypto.EncryptionClassName = defaults[0]
	return nil
}
