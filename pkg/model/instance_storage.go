package model

import "fmt"

// Instance storage (class spec.hardware.instanceStorage) as VM Operator models it: placement
// picks a host with enough local storage, records it on the VM and adds one volume per
// class volume to spec.volumes, each a claim with instanceVolumeClaim (VOL-17: only the
// VM service writes them); the storage service creates those claims, labelled and
// annotated with the host, and provisions them on the host's local datastore.
const (
	// AnnotationInstanceStorageSelectedNodeMOID is the managed object ID of the host placement
	// chose for the VM's instance storage.
	AnnotationInstanceStorageSelectedNodeMOID = "vmoperator.vmware.com/instance-storage-selected-node-moid"
	// AnnotationInstanceStorageSelectedNode is that host's name.
	AnnotationInstanceStorageSelectedNode = "vmoperator.vmware.com/instance-storage-selected-node"
	// LabelInstanceStorage marks the claims of instance storage.
	LabelInstanceStorage = "vmoperator.vmware.com/instance-storage-resource"
	// AnnotationSelectedNode is Kubernetes' annotation of a claim to provision on a node.
	AnnotationSelectedNode = "volume.kubernetes.io/selected-node"
)

// InstanceStorageNeed is the local storage the class's instance volumes need together.
func InstanceStorageNeed(is *InstanceStorage) int64 {
	if is == nil {
		return 0
	}
	var n int64
	for _, v := range is.Volumes {
		n += v.Size.Value()
	}
	return n
}

// InstanceVolumes are the spec.volumes entries of a VM (by its uid) for the class's instance
// storage: named after the VM's uid, so a repeated write names the same claims.
func InstanceVolumes(is *InstanceStorage, vmUID string) []VirtualMachineVolume {
	if is == nil {
		return nil
	}
	prefix := vmUID
	if len(prefix) > 8 {
		prefix = prefix[:8]
	}
	out := make([]VirtualMachineVolume, 0, len(is.Volumes))
	for i, v := range is.Volumes {
		name := fmt.Sprintf("instance-pvc-%s-%d", prefix, i)
		out = append(out, VirtualMachineVolume{Name: name, PersistentVolumeClaim: &PersistentVolumeClaimVolumeSource{
			ClaimName:           name,
			InstanceVolumeClaim: &InstanceVolumeClaimVolumeSource{StorageClass: is.StorageClass, Size: v.Size.DeepCopy()},
		}})
	}
	return out
}
