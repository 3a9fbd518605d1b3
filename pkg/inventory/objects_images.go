package inventory

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/vmware/govmomi/ovf"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vim25/soap"
)

// libraryImage is a content library item and, for an OVF item, its parsed descriptor.
type libraryImage struct {
	library ContentLibrary
	item    library.Item
	env     *ovf.Envelope
}

// object renders the image as a VirtualMachineImage in namespace, or as a
// ClusterVirtualMachineImage when namespace is "". Each call builds fresh maps.
func (i libraryImage) object(namespace string) map[string]any {
	kind, providerKind := "VirtualMachineImage", "ContentLibraryItem"
	if namespace == "" {
		kind, providerKind = "ClusterVirtualMachineImage", "ClusterContentLibraryItem"
	}
	status, labels := imageStatus(i.item, i.env)
	o := newObject(vmopV1alpha5, kind, namespace, vmiName(i.library, i.item.Name), labels)
	o["spec"] = map[string]any{"providerRef": map[string]any{
		"apiVersion": "imageregistry.vmware.com/v1alpha1",
		"kind":       providerKind,
		"name":       providerName(i.library, i.item.Name),
	}}
	o["status"] = status
	return o
}

// libraryImages reads every item of Libraries, in library then item-name order.
func libraryImages(ctx context.Context, rc *rest.Client) ([]libraryImage, error) {
	m := library.NewManager(rc)
	var out []libraryImage
	for _, lib := range Libraries {
		items, err := libraryItems(ctx, m, lib)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			img, err := loadImage(ctx, rc, m, lib, item)
			if err != nil {
				return nil, err
			}
			out = append(out, img)
		}
	}
	return out, nil
}

// ImageStatus is the status of the image whose spec.providerRef is the content library
// item name of kind providerKind (ContentLibraryItem: an item of the namespaces' library,
// ClusterContentLibraryItem: of the cluster library), read from the item and, for an OVF,
// its descriptor; found is false when no item has that name.
func ImageStatus(ctx context.Context, rc *rest.Client, providerKind, name string) (status map[string]any, found bool, err error) {
	scope := NamespaceScope
	if providerKind == "ClusterContentLibraryItem" {
		scope = ClusterScope
	}
	m := library.NewManager(rc)
	for _, lib := range Libraries {
		if lib.Scope != scope {
			continue
		}
		items, err := libraryItems(ctx, m, lib)
		if err != nil {
			return nil, false, err
		}
		for _, item := range items {
			if providerName(lib, item.Name) != name {
				continue
			}
			img, err := loadImage(ctx, rc, m, lib, item)
			if err != nil {
				return nil, false, err
			}
			status, _ := imageStatus(img.item, img.env)
			return status, true, nil
		}
	}
	return nil, false, nil
}

// libraryItems lists the items of lib that are images, by name: OVF, ISO and VM template
// items, as VM Operator surfaces them; other items (plain files) cannot make a VM.
func libraryItems(ctx context.Context, m *library.Manager, lib ContentLibrary) ([]library.Item, error) {
	ids, err := m.FindLibrary(ctx, library.Find{Name: lib.Name, Type: "LOCAL"})
	if err != nil {
		return nil, fmt.Errorf("find library %s: %w", lib.Name, err)
	}
	if len(ids) != 1 {
		return nil, fmt.Errorf("library %s: found %d, want 1 (is the inventory seeded?)", lib.Name, len(ids))
	}
	items, err := m.GetLibraryItems(ctx, ids[0])
	if err != nil {
		return nil, fmt.Errorf("items of library %s: %w", lib.Name, err)
	}
	items = slices.DeleteFunc(items, func(i library.Item) bool { return imageTypes[i.Type] == "" })
	slices.SortFunc(items, func(a, b library.Item) int { return strings.Compare(a.Name, b.Name) })
	return items, nil
}

// loadImage is the image of item, with its descriptor read when it is an OVF.
func loadImage(ctx context.Context, rc *rest.Client, m *library.Manager, lib ContentLibrary, item library.Item) (libraryImage, error) {
	img := libraryImage{library: lib, item: item}
	if item.Type == library.ItemTypeOVF {
		var err error
		if img.env, err = readDescriptor(ctx, rc, m, item); err != nil {
			return img, err
		}
	}
	return img, nil
}

// readDescriptor downloads and parses the item's .ovf file through a download session.
func readDescriptor(ctx context.Context, rc *rest.Client, m *library.Manager, item library.Item) (*ovf.Envelope, error) {
	files, err := m.ListLibraryItemFiles(ctx, item.ID)
	if err != nil {
		return nil, fmt.Errorf("files of library item %s: %w", item.Name, err)
	}
	i := slices.IndexFunc(files, func(f library.File) bool { return strings.HasSuffix(f.Name, ".ovf") })
	if i < 0 {
		return nil, fmt.Errorf("library item %s has no .ovf file", item.Name)
	}
	session, err := m.CreateLibraryItemDownloadSession(ctx, library.Session{LibraryItemID: item.ID})
	if err != nil {
		return nil, fmt.Errorf("download session for %s: %w", item.Name, err)
	}
	defer func() { _ = m.DeleteLibraryItemDownloadSession(context.WithoutCancel(ctx), session) }()

	f, err := m.PrepareLibraryItemDownloadSessionFile(ctx, session, files[i].Name)
	for err == nil && f.Status != "PREPARED" {
		if f.Status == "ERROR" {
			return nil, fmt.Errorf("prepare %s of %s: %v", files[i].Name, item.Name, f.ErrorMessage)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("prepare %s of %s: %w", files[i].Name, item.Name, ctx.Err())
		case <-time.After(10 * time.Millisecond): // vCenter prepares asynchronously
		}
		f, err = m.GetLibraryItemDownloadSessionFile(ctx, session, files[i].Name)
	}
	if err != nil {
		return nil, fmt.Errorf("prepare %s of %s: %w", files[i].Name, item.Name, err)
	}
	u, err := url.Parse(f.DownloadEndpoint.URI)
	if err != nil {
		return nil, fmt.Errorf("download endpoint of %s: %w", item.Name, err)
	}
	p := soap.DefaultDownload
	p.Headers = map[string]string{"vmware-api-session-id": rc.SessionID()}
	body, _, err := rc.Download(ctx, u, &p)
	if err != nil {
		return nil, fmt.Errorf("download %s of %s: %w", files[i].Name, item.Name, err)
	}
	defer body.Close()
	env, err := ovf.Unmarshal(body)
	if err != nil {
		return nil, fmt.Errorf("parse %s of %s: %w", files[i].Name, item.Name, err)
	}
	return env, nil
}
