package model

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fuzzNamespace is the namespace every document is admitted into.
const fuzzNamespace = "my-namespace"

// fuzzEnv is the caller and a namespace holding the seed's inventory (images, class,
// storage classes, encryption classes, claims), with a fixed clock and UUID counter so
// every run of an input admits it identically.
func fuzzEnv(privileged bool) VMEnv {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	photon := &VirtualMachineImageStatus{Name: "photon-5"}
	return VMEnv{
		Privileged: privileged, UpgradeExempt: privileged, // system:masters, not a service
		BuildVersion: "v-fuzz",
		Now:          func() time.Time { return now },
		NewUUID:      counterUUIDs(),
		Namespace:    NamespaceSettings{DefaultNetwork: "VM Network", Zones: []string{"zone-a", "zone-b"}},
		Lookup: &fakeLookup{
			nsImages:      append(slices.Clip(testImages.ns), ImageInfo{Kind: "VirtualMachineImage", Name: "vmi-4444", DisplayName: "my-image"}, ImageInfo{Kind: "VirtualMachineImage", Name: "vmi-5555", DisplayName: "multi-disk-image"}),
			clusterImages: append(slices.Clip(testImages.cluster), ImageInfo{Kind: "ClusterVirtualMachineImage", Name: "vmi-eeee", DisplayName: "ubuntu-22.04"}),
			storageClasses: map[string]*StorageClass{
				"my-storage-class": {ObjectMeta: metav1.ObjectMeta{Name: "my-storage-class"},
					Provisioner: "csi.vsphere.vmware.com", Parameters: map[string]string{"storagePolicyID": "aa6d5a82-1c88-45da-85d3-3d74b91a5bad"}},
				"my-encrypted-storage-class": {ObjectMeta: metav1.ObjectMeta{Name: "my-encrypted-storage-class", Labels: map[string]string{EncryptionEnabledLabel: "true"}},
					Provisioner: "csi.vsphere.vmware.com", Parameters: map[string]string{"storagePolicyID": "f4e5bade-15a2-4805-bf8e-52318c4ce443"}},
			},
			encryptionClasses: map[string][]EncryptionClass{fuzzNamespace: {
				{ObjectMeta: metav1.ObjectMeta{Name: "my-encryption-class", Namespace: fuzzNamespace, Labels: map[string]string{DefaultEncryptionClassLabel: "true"}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "other-encryption-class", Namespace: fuzzNamespace}},
			}},
			pvcs: map[string]*PersistentVolumeClaim{
				fuzzNamespace + "/data-pvc":   fuzzPVC("data-pvc", "ReadWriteMany", "my-storage-class"),
				fuzzNamespace + "/shared-pvc": fuzzPVC("shared-pvc", "ReadWriteMany", "my-storage-class"),
				fuzzNamespace + "/logs-pvc":   fuzzPVC("logs-pvc", "ReadWriteOnce", "my-encrypted-storage-class"),
			},
			classes: map[string]*VirtualMachineClass{
				fuzzNamespace + "/my-vm-class": {ObjectMeta: metav1.ObjectMeta{Name: "my-vm-class", Namespace: fuzzNamespace}},
			},
			images: map[string]*VirtualMachineImageStatus{
				fuzzNamespace + "/VirtualMachineImage/vmi-0a0044d7c690bcbea": photon,
			},
		},
	}
}

// fuzzPVC is a claim of the fuzz namespace.
func fuzzPVC(name string, mode PersistentVolumeAccessMode, storageClass string) *PersistentVolumeClaim {
	return &PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fuzzNamespace},
		Spec: PersistentVolumeClaimSpec{AccessModes: []PersistentVolumeAccessMode{mode}, StorageClassName: &storageClass}}
}
