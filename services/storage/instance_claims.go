package storage

// Instance storage (model/instance_storage.go): placement records the VM's host and adds
// the class's instance volumes to spec.volumes; the storage service creates their claims,
// owned by the VM, and provisions them on the local datastore of that host, where the VM
// runs. The claims then attach like any other.

import (
	"context"
	"fmt"
	"time"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// ensureInstanceClaims creates the claims of the VM's instance volumes that do not exist,
// each once: the create is a compare-and-swap on the claim's (absent) record.
func (h *handler) ensureInstanceClaims(ctx context.Context, vm *model.VirtualMachine) error {
	for _, v := range vm.Spec.Volumes {
		c := v.PersistentVolumeClaim
		if c == nil || c.InstanceVolumeClaim == nil {
			continue
		}
		o, err := readOwned(ctx, h.js, events.Ref{Plural: pluralClaims, Namespace: vm.Namespace, Name: c.ClaimName})
		if err != nil {
			return err
		}
		if o.live {
			continue
		}
		if err := create(ctx, h.js, o, instanceClaim(vm, c, h.now())); err != nil {
			return err
		}
	}
	return nil
}

// instanceClaim is the claim of an instance volume: labelled as instance storage, annotated
// with the host placement chose, owned by the VM (it goes with it).
func instanceClaim(vm *model.VirtualMachine, c *model.PersistentVolumeClaimVolumeSource, now time.Time) model.PersistentVolumeClaim {
	class := c.InstanceVolumeClaim.StorageClass
	return model.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: newMeta(vm, c.ClaimName, map[string]string{model.LabelInstanceStorage: "true", labelVMName: vm.Name},
			map[string]string{
				model.AnnotationSelectedNode:                    vm.Annotations[model.AnnotationInstanceStorageSelectedNode],
				model.AnnotationInstanceStorageSelectedNodeMOID: vm.Annotations[model.AnnotationInstanceStorageSelectedNodeMOID],
			}, now),
		Spec: model.PersistentVolumeClaimSpec{
			AccessModes:      []model.PersistentVolumeAccessMode{model.AccessModeReadWriteOnce},
			Resources:        &model.VolumeResourceRequirements{Requests: model.ResourceList{"storage": c.InstanceVolumeClaim.Size}},
			StorageClassName: &class,
			VolumeMode:       model.VolumeModeFilesystem,
		},
	}
}

// instanceDatastores are the datastores CNS may put the claim's volume on: for an instance
// storage claim, the local datastore of its host with the most free space (problem says why
// there is none); nil for any other claim (every datastore).
func (c *claims) instanceDatastores(ctx context.Context, claim *model.PersistentVolumeClaim) (on []types.ManagedObjectReference, problem string, err error) {
	host := claim.Annotations[model.AnnotationInstanceStorageSelectedNodeMOID]
	if claim.Labels[model.LabelInstanceStorage] != "true" {
		return nil, "", nil
	}
	if host == "" {
		return nil, fmt.Sprintf("instance storage claim without annotation %s", model.AnnotationInstanceStorageSelectedNodeMOID), nil
	}
	ref := types.ManagedObjectReference{Type: "HostSystem", Value: host}
	local, err := vcenter.LocalDatastores(ctx, c.volumes.vc.Client, []types.ManagedObjectReference{ref})
	if err != nil {
		return nil, "", err
	}
	if len(local[ref]) == 0 {
		return nil, fmt.Sprintf("host %s (%s) has no usable local datastore for instance storage",
			host, claim.Annotations[model.AnnotationSelectedNode]), nil
	}
	return []types.ManagedObjectReference{local[ref][0].Ref}, "", nil
}
