package admission

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/quota"
)

// checkQuota refuses, with the 403 kube-apiserver's ResourceQuota admission answers, a VM or
// claim whose storage does not fit in one of its namespace's quotas (the seed's Storage
// Quota): what it adds on top of what the namespace uses must stay within every limit.
// A write that adds storage first takes its namespace's quota hold (quota.Take), so that
// what it reads counts every charging write before it.
func (a *Admission) checkQuota(ctx context.Context, r *Request) error {
	if !quota.Charged(r.Kind.Kind) {
		return nil
	}
	if quotas, err := quota.Quotas(a.rm, r.Namespace); err != nil || len(quotas) == 0 {
		return err
	}
	delta, err := a.chargeDelta(r)
	if err != nil || len(delta) == 0 {
		return err
	}
	quota.Take(ctx)
	u, err := quota.Read(a.rm, r.Namespace)
	if err != nil {
		return fmt.Errorf("read the storage quotas of %s: %w", r.Namespace, err)
	}
	for _, q := range u.Quotas {
		if msg := model.ExceededQuota(q.Name, q.Spec.Hard, u.Used(q), delta); msg != "" {
			return apierrors.NewForbidden(schema.GroupResource{Group: r.Kind.Group, Resource: r.Kind.Plural}, r.Name, errors.New(msg))
		}
	}
	return nil
}

// chargeDelta is the storage r adds to its namespace's quota resources.
func (a *Admission) chargeDelta(r *Request) (model.ResourceList, error) {
	switch r.Kind.Kind {
	case "VirtualMachine":
		vm, old, err := typedVMs(r)
		if err != nil {
			return nil, err
		}
		if !r.create() && sameBootDisk(vm, old) {
			return nil, nil // its image and storage class never change (IMM): nothing more to charge
		}
		var img *model.VirtualMachineImageStatus
		if vm.Spec.Image != nil {
			if img, err = quota.Image(a.rm, r.Namespace, *vm.Spec.Image); err != nil {
				return nil, err
			}
		}
		if r.create() {
			return model.ChargeDelta(nil, model.VMStorageCharge(vm, img)), nil
		}
		// It charged on create; a larger boot disk charges what it adds.
		grown := model.BootDiskGrowth(vm, img)
		grown.Sub(model.BootDiskGrowth(old, img))
		return model.ChargeDelta(nil, model.StorageCharge{StorageClass: vm.Spec.StorageClass, Storage: grown}), nil
	case "PersistentVolumeClaim":
		pvc, old, err := typedObjects[model.PersistentVolumeClaim](r)
		if err != nil {
			return nil, err
		}
		if old == nil {
			if pvc.Spec.VolumeName != "" {
				return nil, nil // it binds a volume that exists (a registered disk): nothing new is stored
			}
			return model.ChargeDelta(nil, model.ClaimStorageCharge(pvc)), nil
		}
		was := model.ClaimStorageCharge(old)
		return model.ChargeDelta(&was, model.ClaimStorageCharge(pvc)), nil
	}
	return nil, nil
}

// sameBootDisk reports whether an update leaves spec.advanced.bootDiskCapacity as it was.
func sameBootDisk(vm, old *model.VirtualMachine) bool {
	capacity := func(v *model.VirtualMachine) *resource.Quantity {
		if v.Spec.Advanced == nil {
			return nil
		}
		return v.Spec.Advanced.BootDiskCapacity
	}
	a, b := capacity(vm), capacity(old)
	return a == nil && b == nil || a != nil && b != nil && a.Cmp(*b) == 0
}
