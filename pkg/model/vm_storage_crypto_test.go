package model

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachineStorageClassAndCrypto(t *testing.T) {
	storageClass := func(name string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.StorageClass = name }
	}
	encryptWith := func(class string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.Crypto = &VirtualMachineCryptoSpec{EncryptionClassName: class} }
	}
	associated := func(names ...string) func(*VMEnv) { return func(env *VMEnv) { env.Namespace.StorageClasses = names } }
	const sc, ecn = "spec.storageClass", "spec.crypto.encryptionClassName"
	runVMCases(t, []vmCase{
		{name: "CRY-0 storage class given", code: 200},
		{name: "CRY-0 no storage class", change: storageClass(""), code: 422, path: sc, typ: field.ErrorTypeRequired},
		{name: "CRY-1 storage class associated with the namespace", env: associated("my-storage-class"), code: 200},
		{name: "CRY-1 storage class does not exist", change: storageClass("gold"), code: 422, path: sc, typ: field.ErrorTypeInvalid},
		{name: "CRY-1 storage class without storagePolicyID", change: storageClass("no-policy-storage-class"), code: 422, path: sc, typ: field.ErrorTypeInvalid},
		{name: "CRY-1 storage class not associated with the namespace", env: associated("my-encrypted-storage-class"),
			code: 422, path: sc, typ: field.ErrorTypeInvalid},

		{name: "CRY-2 crypto accepted (BYOK is on)", change: func(vm *VirtualMachine) {
			vm.Spec.Crypto = &VirtualMachineCryptoSpec{VTPMMode: VTPMModeClone}
		}, code: 200},

		{name: "CRY-3 encryption class on an encryption storage class", change: func(vm *VirtualMachine) {
			storageClass("my-encrypted-storage-class")(vm)
			encryptWith("other-encryption-class")(vm)
		}, code: 200},
		{name: "CRY-3 encryption class on a plain storage class", change: encryptWith("my-encryption-class"), code: 422, path: ecn, typ: field.ErrorTypeInvalid},
		{name: "CRY-3 encryption class without a storage class", change: func(vm *VirtualMachine) {
			storageClass("")(vm)
			encryptWith("my-encryption-class")(vm)
		}, code: 422, path: ecn, typ: field.ErrorTypeInvalid},
		{name: "CRY-3 encryption class added on update to a plain storage class", update: true, change: encryptWith("my-encryption-class"),
			code: 422, path: ecn, typ: field.ErrorTypeInvalid},
	})
}

func TestDefaultEncryptionClass(t *testing.T) {
	defaultClass := func(name string) EncryptionClass {
		return EncryptionClass{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ruleNS, Labels: map[string]string{DefaultEncryptionClassLabel: "true"}}}
	}
	yes := true
	tests := []struct {
		name         string
		storageClass string
		crypto       *VirtualMachineCryptoSpec
		classes      []EncryptionClass
		want         *VirtualMachineCryptoSpec
		code         int
	}{
		{name: "D10 the namespace default on an encryption storage class", storageClass: "my-encrypted-storage-class",
			classes: []EncryptionClass{defaultClass("my-encryption-class")}, code: 200,
			want: &VirtualMachineCryptoSpec{EncryptionClassName: "my-encryption-class", UseDefaultKeyProvider: &yes, VTPMMode: VTPMModeNew}},
		{name: "D10 a named class is kept", storageClass: "my-encrypted-storage-class",
			crypto:  &VirtualMachineCryptoSpec{EncryptionClassName: "other-encryption-class"},
			classes: []EncryptionClass{defaultClass("my-encryption-class")}, code: 200,
			want: &VirtualMachineCryptoSpec{EncryptionClassName: "other-encryption-class", UseDefaultKeyProvider: &yes, VTPMMode: VTPMModeNew}},
		{name: "D10 nothing on a plain storage class", storageClass: "my-storage-class",
			classes: []EncryptionClass{defaultClass("my-encryption-class")}, code: 200},
		{name: "D10 nothing without a default class", storageClass: "my-encrypted-storage-class", code: 200},
		{name: "D10 several default classes", storageClass: "my-encrypted-storage-class",
			classes: []EncryptionClass{defaultClass("a"), defaultClass("b")}, code: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := ruleVM()
			vm.Spec.StorageClass, vm.Spec.Crypto = tt.storageClass, tt.crypto
			env := ruleEnv()
			env.Lookup.(*fakeLookup).encryptionClasses = map[string][]EncryptionClass{ruleNS: tt.classes}
			code, errs := admitVM(t, vm, nil, env)
			checkAdmission(t, code, errs, tt.code, "spec.crypto.encryptionClassName", field.ErrorTypeInvalid)
			if code != 200 {
				return
			}
			if diff := cmp.Diff(tt.want, vm.Spec.Crypto); diff != "" {
				t.Errorf("crypto (-want +got):\n%s", diff)
			}
		})
	}
}
