package inventory

import (
	"context"
	"fmt"
	"path"

	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/vcenter"
)

// LibraryTemplateFolder holds the template VMs behind VM template (VMTX) library items,
// apart from TemplateFolder, whose templates are images of their own.
const LibraryTemplateFolder = "vmop-library-templates"

// vmTemplateItem is one VM template item Seed makes from a template VM of vmTemplates.
type vmTemplateItem struct {
	item, source string
	library      ContentLibrary
}

var vmTemplateItems = []vmTemplateItem{
	{item: PhotonVMTX, source: PhotonTemplate, library: Library},
}

// ensureTemplateItems makes each VM template item of lib (library ID libID) that is
// missing, from its template VM (the content library copies the VM into the item).
func (s *seeder) ensureTemplateItems(ctx context.Context, m *library.Manager, lib ContentLibrary, libID string) error {
	for _, t := range vmTemplateItems {
		if t.library != lib {
			continue
		}
		if err := s.ensureTemplateItem(ctx, m, libID, t); err != nil {
			return fmt.Errorf("VM template item %s: %w", t.item, err)
		}
	}
	return nil
}

func (s *seeder) ensureTemplateItem(ctx context.Context, m *library.Manager, libID string, t vmTemplateItem) error {
	items, err := m.FindLibraryItems(ctx, library.FindItem{LibraryID: libID, Name: t.item})
	if err != nil {
		return fmt.Errorf("find library item: %w", err)
	}
	if len(items) > 0 {
		return nil
	}
	source, err := s.finder.VirtualMachine(ctx, path.Join("/", Datacenter, "vm", TemplateFolder, t.source))
	if err != nil {
		return fmt.Errorf("source template: %w", err)
	}
	folder, err := s.vmFolder(ctx, LibraryTemplateFolder)
	if err != nil {
		return err
	}
	pool, err := s.clusters[Zones[0].Name].ResourcePool(ctx)
	if err != nil {
		return err
	}
	_, err = vcenter.NewManager(s.rest).CreateTemplate(ctx, vcenter.Template{
		Name: t.item, Description: "VM template of " + t.source, Library: libID, SourceVM: source.Reference().Value,
		Placement: &vcenter.Placement{Folder: folder.Reference().Value, ResourcePool: pool.Reference().Value},
	})
	return err
}
