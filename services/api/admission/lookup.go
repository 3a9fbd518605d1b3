package admission

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// lookup answers admission rules' questions (model.Lookup) from the read model.
type lookup struct{ rm Reader }

// get decodes one object into out; found is false when it does not exist.
func (l lookup) get(plural, ns, name string, out any) (bool, error) {
	o, err := l.rm.Get(plural, ns, name)
	if errors.Is(err, readmodel.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s %s/%s: %w", plural, ns, name, err)
	}
	if err := json.Unmarshal(o.JSON, out); err != nil {
		return false, fmt.Errorf("decode %s %s/%s: %w", plural, ns, name, err)
	}
	return true, nil
}

// list decodes every object of a kind in a namespace ("" = cluster scope) through each.
func (l lookup) list(plural, ns string, each func(raw []byte) error) error {
	res, err := l.rm.List(readmodel.ListOptions{Plural: plural, Namespace: ns})
	if err != nil {
		return fmt.Errorf("list %s: %w", plural, err)
	}
	for _, o := range res.Items {
		if err := each(o.JSON); err != nil {
			return fmt.Errorf("decode %s: %w", plural, err)
		}
	}
	return nil
}

func (l lookup) Images(ns string) (namespaced, cluster []model.ImageInfo, err error) {
	collect := func(kind string, out *[]model.ImageInfo) func([]byte) error {
		return func(raw []byte) error {
			var img model.VirtualMachineImage
			if err := json.Unmarshal(raw, &img); err != nil {
				return err
			}
			*out = append(*out, model.ImageInfo{Kind: kind, Name: img.Name, DisplayName: img.Status.Name})
			return nil
		}
	}
	if err := l.list("virtualmachineimages", ns, collect("VirtualMachineImage", &namespaced)); err != nil {
		return nil, nil, err
	}
	if err := l.list("clustervirtualmachineimages", "", collect("ClusterVirtualMachineImage", &cluster)); err != nil {
		return nil, nil, err
	}
	return namespaced, cluster, nil
}

func (l lookup) StorageClass(name string) (*model.StorageClass, bool, error) {
	var sc model.StorageClass
	found, err := l.get("storageclasses", "", name, &sc)
	return &sc, found, err
}

func (l lookup) EncryptionClasses(ns string) ([]model.EncryptionClass, error) {
	var out []model.EncryptionClass
	err := l.list("encryptionclasses", ns, func(raw []byte) error {
		var ec model.EncryptionClass
		if err := json.Unmarshal(raw, &ec); err != nil {
			return err
		}
		out = append(out, ec)
		return nil
	})
	return out, err
}

func (l lookup) PVC(ns, name string) (*model.PersistentVolumeClaim, bool, error) {
	var pvc model.PersistentVolumeClaim
	found, err := l.get("persistentvolumeclaims", ns, name, &pvc)
	return &pvc, found, err
}

func (l lookup) Class(ns, name string) (*model.VirtualMachineClass, bool, error) {
	var c model.VirtualMachineClass
	found, err := l.get("virtualmachineclasses", ns, name, &c)
	return &c, found, err
}

func (l lookup) Image(ns string, ref model.ImageRef) (*model.VirtualMachineImageStatus, bool, error) {
	plural, scope := "virtualmachineimages", ns
	if ref.Kind == "ClusterVirtualMachineImage" {
		plural, scope = "clustervirtualmachineimages", ""
	}
	var img model.VirtualMachineImage
	found, err := l.get(plural, scope, ref.Name, &img)
	return &img.Status, found, err
}
