package placement

import (
	"context"
	"fmt"
	"sync"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
)

// Each namespace's VMs live in a VM folder named after the namespace, so a VM's name (its
// object name) is unique in its folder, as vCenter requires: a second create of the same
// VM fails there instead of duplicating it, and a half-made VM can be found by name.
type folderCache struct {
	mu sync.Mutex
	m  map[string]*object.Folder
}

// namespaceFolder returns the namespace's folder, creating it when create is set; nil
// when it does not exist and create is not set.
func (r *reconciler) namespaceFolder(ctx context.Context, t *topology, namespace string, create bool) (*object.Folder, error) {
	r.folders.mu.Lock()
	defer r.folders.mu.Unlock()
	if f, ok := r.folders.m[namespace]; ok {
		return f, nil
	}
	var f *object.Folder
	err := traced(ctx, spanFolder, func(ctx context.Context) error {
		var err error
		f, err = r.findFolder(ctx, t, namespace)
		if err != nil || f != nil || !create {
			return err
		}
		f, err = t.vmFolder.CreateFolder(ctx, namespace)
		if fault.Is(err, &types.DuplicateName{}) {
			f, err = r.findFolder(ctx, t, namespace)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("VM folder of namespace %s: %w", namespace, err)
	}
	if f != nil {
		r.folders.m[namespace] = f
	}
	return f, nil
}

func (r *reconciler) findFolder(ctx context.Context, t *topology, namespace string) (*object.Folder, error) {
	ref, err := object.NewSearchIndex(r.vc.c.Client).FindChild(ctx, t.vmFolder, namespace)
	if err != nil || ref == nil {
		return nil, err
	}
	if ref.Reference().Type != "Folder" {
		return nil, fmt.Errorf("%s in the VM folder is a %s, not a folder", namespace, ref.Reference().Type)
	}
	return object.NewFolder(r.vc.c.Client, ref.Reference()), nil
}
