// Package quota is the namespaces' storage quotas: what the VMs and claims of a namespace
// charge against its ResourceQuotas (read by admission to refuse what does not fit), and
// the keeper that reports every quota's use in its status.
package quota

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// Reader is the read model as quotas read it.
type Reader interface {
	Get(plural, namespace, name string) (readmodel.Object, error)
	List(o readmodel.ListOptions) (readmodel.ListResult, error)
}

// Usage is a namespace's quotas and what its VMs and claims charge against them.
type Usage struct {
	Quotas  []model.ResourceQuota
	Charges []model.StorageCharge
}

// Used is q's status.used: the charges summed over the resources q limits.
func (u Usage) Used(q model.ResourceQuota) model.ResourceList {
	return model.QuotaUsage(q.Spec.Hard, u.Charges)
}

// Charged tells the kinds that charge storage quotas: VirtualMachines and claims.
func Charged(kind string) bool { return kind == "VirtualMachine" || kind == "PersistentVolumeClaim" }

// Quotas are the ResourceQuotas of namespace ns.
func Quotas(rm Reader, ns string) ([]model.ResourceQuota, error) {
	var out []model.ResourceQuota
	err := list(rm, "resourcequotas", ns, func(q *model.ResourceQuota) error {
		out = append(out, *q)
		return nil
	})
	return out, err
}

// Read reads the usage of namespace ns; without quotas there it reads nothing else.
func Read(rm Reader, ns string) (Usage, error) {
	var u Usage
	var err error
	if u.Quotas, err = Quotas(rm, ns); err != nil || len(u.Quotas) == 0 {
		return u, err
	}
	images := map[model.ImageRef]*model.VirtualMachineImageStatus{}
	err = list(rm, "virtualmachines", ns, func(vm *model.VirtualMachine) error {
		var img *model.VirtualMachineImageStatus
		if total := vm.Status.Storage; (total == nil || total.Total == nil) && vm.Spec.Image != nil {
			ref := *vm.Spec.Image
			if _, known := images[ref]; !known {
				var err error
				if images[ref], err = Image(rm, ns, ref); err != nil {
					return err
				}
			}
			img = images[ref]
		}
		u.Charges = append(u.Charges, model.VMStorageCharge(vm, img))
		return nil
	})
	if err != nil {
		return u, err
	}
	err = list(rm, "persistentvolumeclaims", ns, func(pvc *model.PersistentVolumeClaim) error {
		u.Charges = append(u.Charges, model.ClaimStorageCharge(pvc))
		return nil
	})
	return u, err
}

// Image is the status of the image ref names, seen from namespace ns; nil when there is
// no such image.
func Image(rm Reader, ns string, ref model.ImageRef) (*model.VirtualMachineImageStatus, error) {
	plural, scope := "virtualmachineimages", ns
	if ref.Kind == "ClusterVirtualMachineImage" {
		plural, scope = "clustervirtualmachineimages", ""
	}
	o, err := rm.Get(plural, scope, ref.Name)
	if errors.Is(err, readmodel.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read image %s: %w", ref.Name, err)
	}
	var img model.VirtualMachineImage
	if err := json.Unmarshal(o.JSON, &img); err != nil {
		return nil, fmt.Errorf("decode image %s: %w", ref.Name, err)
	}
	return &img.Status, nil
}

// list decodes every object of a kind in namespace ns through each.
func list[T any](rm Reader, plural, ns string, each func(*T) error) error {
	res, err := rm.List(readmodel.ListOptions{Plural: plural, Namespace: ns})
	if err != nil {
		return fmt.Errorf("list %s in %s: %w", plural, ns, err)
	}
	for _, o := range res.Items {
		obj := new(T)
		if err := json.Unmarshal(o.JSON, obj); err != nil {
			return fmt.Errorf("decode %s in %s: %w", plural, ns, err)
		}
		if err := each(obj); err != nil {
			return err
		}
	}
	return nil
}
