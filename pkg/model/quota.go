package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The ResourceQuota resources vmop enforces: the storage requested in a namespace, in all
// and per storage class, as Kubernetes names them. VMs charge their storage (the seed's
// Storage Quota), claims their requests.
const (
	ResourceRequestsStorage    = "requests.storage"
	storageClassRequestsSuffix = ".storageclass.storage.k8s.io/requests.storage"
)

// StorageClassRequestsStorage is the quota resource of the storage requested with class.
func StorageClassRequestsStorage(class string) string { return class + storageClassRequestsSuffix }

// StorageCharge is what one object charges against a namespace's storage quotas.
type StorageCharge struct {
	StorageClass string // "" charges requests.storage alone
	Storage      resource.Quantity
}

// Resources are the quota resources the charge counts against, with its amount.
func (c StorageCharge) Resources() ResourceList {
	out := ResourceList{ResourceRequestsStorage: c.Storage.DeepCopy()}
	if c.StorageClass != "" {
		out[StorageClassRequestsStorage(c.StorageClass)] = c.Storage.DeepCopy()
	}
	return out
}

// ImageStorageCapacity is the capacity an image's disks can grow to: what a VM deployed from
// it reserves of the quota (the seed's disk that is 2Gi in size but can grow to 100Gi
// reserves 100Gi). A disk without a limit counts its requested size.
func ImageStorageCapacity(img *VirtualMachineImageStatus) resource.Quantity {
	total := *resource.NewQuantity(0, resource.BinarySI)
	for _, d := range img.Disks {
		switch {
		case d.Limit != nil:
			total.Add(*d.Limit)
		case d.Requested != nil:
			total.Add(*d.Requested)
		}
	}
	return total
}

// VMStorageCharge is what a VM charges: status.storage.total once the storage service
// reported it (other files and the requested capacity of its non-PVC disks), before that
// the capacity of its image's disks, its boot disk grown to spec.advanced.bootDiskCapacity
// (image nil: nothing is known to charge).
func VMStorageCharge(vm *VirtualMachine, image *VirtualMachineImageStatus) StorageCharge {
	c := StorageCharge{StorageClass: vm.Spec.StorageClass, Storage: *resource.NewQuantity(0, resource.BinarySI)}
	switch {
	case vm.Status.Storage != nil && vm.Status.Storage.Total != nil:
		c.Storage = vm.Status.Storage.Total.DeepCopy()
	case image != nil:
		c.Storage = ImageStorageCapacity(image)
		c.Storage.Add(BootDiskGrowth(vm, image))
	}
	return c
}

// BootDiskGrowth is how much spec.advanced.bootDiskCapacity adds to the image's first disk
// (the boot disk; an image without disks, an ISO, gets a boot disk of that size); zero when
// it asks for no more.
func BootDiskGrowth(vm *VirtualMachine, image *VirtualMachineImageStatus) resource.Quantity {
	growth := *resource.NewQuantity(0, resource.BinarySI)
	if vm.Spec.Advanced == nil || vm.Spec.Advanced.BootDiskCapacity == nil || image == nil {
		return growth
	}
	growth = vm.Spec.Advanced.BootDiskCapacity.DeepCopy()
	if len(image.Disks) > 0 {
		growth.Sub(ImageStorageCapacity(&VirtualMachineImageStatus{Disks: image.Disks[:1]}))
	}
	if growth.Sign() < 0 {
		return *resource.NewQuantity(0, resource.BinarySI)
	}
	return growth
}

// ClaimStorageCharge is what a PersistentVolumeClaim charges: its requested storage.
func ClaimStorageCharge(pvc *PersistentVolumeClaim) StorageCharge {
	c := StorageCharge{Storage: *resource.NewQuantity(0, resource.BinarySI)}
	if pvc.Spec.StorageClassName != nil {
		c.StorageClass = *pvc.Spec.StorageClassName
	}
	if r := pvc.Spec.Resources; r != nil {
		if q, ok := r.Requests["storage"]; ok {
			c.Storage = q.DeepCopy()
		}
	}
	return c
}

// QuotaUsage sums charges over the resources hard limits: the quota's status.used.
func QuotaUsage(hard ResourceList, charges []StorageCharge) ResourceList {
	used := make(ResourceList, len(hard))
	for name := range hard {
		used[name] = *resource.NewQuantity(0, resource.BinarySI)
	}
	for _, c := range charges {
		for name, q := range c.Resources() {
			if u, ok := used[name]; ok {
				u.Add(q)
				used[name] = u
			}
		}
	}
	return used
}

// ChargeDelta is what changing an object from old to next adds to each quota resource;
// only increases are listed (a change that frees storage needs no room).
func ChargeDelta(old *StorageCharge, next StorageCharge) ResourceList {
	delta := ResourceList{}
	for name, q := range next.Resources() {
		if old != nil {
			if was, ok := old.Resources()[name]; ok {
				q.Sub(was)
			}
		}
		if q.Sign() > 0 {
			delta[name] = q
		}
	}
	return delta
}

// ExceededQuota tells whether delta on top of used exceeds one of hard's limits, with the
// reason kube-apiserver gives: "exceeded quota: <name>, requested: <r>=<q>, used: …,
// limited: …", naming only the exceeded resources. "" means the quota has room.
func ExceededQuota(name string, hard, used, delta ResourceList) string {
	var exceeded []string
	for res, q := range delta {
		limit, ok := hard[res]
		if !ok {
			continue
		}
		total := used[res].DeepCopy()
		total.Add(q)
		if total.Cmp(limit) > 0 {
			exceeded = append(exceeded, res)
		}
	}
	if len(exceeded) == 0 {
		return ""
	}
	slices.Sort(exceeded)
	list := func(l ResourceList) string {
		parts := make([]string, len(exceeded))
		for i, res := range exceeded {
			q := l[res]
			parts[i] = res + "=" + q.String()
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprintf("exceeded quota: %s, requested: %s, used: %s, limited: %s", name, list(delta), list(used), list(hard))
}

// ValidateResourceQuota checks that a quota limits only what vmop enforces (storage
// requests, in all or per storage class), with quantities of zero or more: a limit vmop
// would not enforce is refused rather than stored and ignored.
func ValidateResourceQuota(q, _ *ResourceQuota) field.ErrorList {
	var errs field.ErrorList
	hard := field.NewPath("spec", "hard")
	for _, res := range slices.Sorted(maps.Keys(q.Spec.Hard)) {
		p := hard.Key(res)
		if class, ok := strings.CutSuffix(res, storageClassRequestsSuffix); res != ResourceRequestsStorage &&
			(!ok || len(validation.IsDNS1123Subdomain(class)) > 0) {
			errs = append(errs, field.NotSupported(p, res, []string{ResourceRequestsStorage, StorageClassRequestsStorage("<storage class>")}))
			continue
		}
		if v := q.Spec.Hard[res]; v.Sign() < 0 {
			errs = append(errs, field.Invalid(p, v.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}

// quotaColumn is kubectl's REQUEST column of a ResourceQuota (with limits, its LIMIT
// column): "<resource>: <used>/<hard>" for every resource of status.hard, sorted.
func quotaColumn(limits bool) func(obj []byte) any {
	return func(obj []byte) any {
		var q ResourceQuota
		if json.Unmarshal(obj, &q) != nil {
			return nil
		}
		var parts []string
		for _, res := range slices.Sorted(maps.Keys(q.Status.Hard)) {
			if strings.HasPrefix(res, "limits.") != limits {
				continue
			}
			used, hard := q.Status.Used[res], q.Status.Hard[res]
			parts = append(parts, fmt.Sprintf("%s: %s/%s", res, used.String(), hard.String()))
		}
		return strings.Join(parts, ", ")
	}
}
