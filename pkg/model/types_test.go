package model

import (
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"
)

// newObject returns a pointer to an empty object of a served kind.
func newObject(kind string) (any, error) {
	switch kind {
	case "VirtualMachine":
		return &VirtualMachine{}, nil
	case "VirtualMachineGroup":
		return &VirtualMachineGroup{}, nil
	case "VirtualMachineClass":
		return &VirtualMachineClass{}, nil
	case "VirtualMachineClassInstance":
		return &VirtualMachineClassInstance{}, nil
	case "VirtualMachineImage":
		return &VirtualMachineImage{}, nil
	case "ClusterVirtualMachineImage":
		return &ClusterVirtualMachineImage{}, nil
	case "EncryptionClass":
		return &EncryptionClass{}, nil
	case "ComputePolicy":
		return &ComputePolicy{}, nil
	case "TagPolicy":
		return &TagPolicy{}, nil
	case "StorageClass":
		return &StorageClass{}, nil
	case "CnsRegisterVolume":
		return &CnsRegisterVolume{}, nil
	case "PersistentVolumeClaim":
		return &PersistentVolumeClaim{}, nil
	case "Namespace":
		return &Namespace{}, nil
	case "ResourceQuota":
		return &ResourceQuota{}, nil
	case "Secret":
		return &Secret{}, nil
	case "ConfigMap":
		return &ConfigMap{}, nil
	}
	return nil, fmt.Errorf("no Go type for kind %q", kind)
}

// newList returns a pointer to an empty list of a served kind.
func newList(listKind string) (any, error) {
	switch listKind {
	case "VirtualMachineList":
		return &VirtualMachineList{}, nil
	case "VirtualMachineGroupList":
		return &VirtualMachineGroupList{}, nil
	case "VirtualMachineClassList":
		return &VirtualMachineClassList{}, nil
	case "VirtualMachineClassInstanceList":
		return &VirtualMachineClassInstanceList{}, nil
	case "VirtualMachineImageList":
		return &VirtualMachineImageList{}, nil
	case "ClusterVirtualMachineImageList":
		return &ClusterVirtualMachineImageList{}, nil
	case "EncryptionClassList":
		return &EncryptionClassList{}, nil
	case "ComputePolicyList":
		return &ComputePolicyList{}, nil
	case "TagPolicyList":
		return &TagPolicyList{}, nil
	case "StorageClassList":
		return &StorageClassList{}, nil
	case "PersistentVolumeClaimList":
		return &PersistentVolumeClaimList{}, nil
	case "NamespaceList":
		return &NamespaceList{}, nil
	case "ResourceQuotaList":
		return &ResourceQuotaList{}, nil
	case "SecretList":
		return &SecretList{}, nil
	case "ConfigMapList":
		return &ConfigMapList{}, nil
	case "CnsRegisterVolumeList":
		return &CnsRegisterVolumeList{}, nil
	}
	return nil, fmt.Errorf("no Go type for list kind %q", listKind)
}

// TestEveryKindHasTypes decodes a minimal object and list of every registered kind strictly,
// so a kind cannot be registered without Go types that carry apiVersion, kind and metadata.
func TestEveryKindHasTypes(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k.Kind, func(t *testing.T) {
			obj, err := newObject(k.Kind)
			if err != nil {
				t.Fatal(err)
			}
			doc := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: x\n  labels: {a: b}\n", k.APIVersion(), k.Kind)
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatal(err)
			}
			if err := yaml.UnmarshalStrict([]byte(doc+"bogus: 1\n"), obj); err == nil {
				t.Error("an unknown top-level field decoded without error")
			}
			list, err := newList(k.ListKind)
			if err != nil {
				t.Fatal(err)
			}
			listDoc := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {resourceVersion: \"7.3\"}\nitems:\n- %s",
				k.APIVersion(), k.ListKind, "metadata: {name: x}\n")
			if err := yaml.UnmarshalStrict([]byte(listDoc), list); err != nil {
				t.Fatal(err)
			}
		})
	}
}
