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

// libraryTemplates makes PhotonVMTX, a VM template item of Library, from PhotonTemplate
// (the content library copies the VM into the item), unless the item exists.
func (s *seeder) libraryTemplates(ctx context.Context) error {
	m := library.NewManager(s.rest)
	ids, err := m.FindLibrary(ctx, library.Find{Name: Library.Name, Type: "LOCAL"})
	if err != nil {
		return fmt.Errorf("find library %s: %w", Library.Name, err)
	}
	if len(ids) != 1 {
		return fmt.Errorf("library %s: found %d, want 1", Library.Name, len(ids))
	}
	items, err := m.FindLibraryItems(ctx, library.FindItem{LibraryID: ids[0], Name: PhotonVMTX})
	if err != nil {
		return fmt.Errorf("find library item %s: %w", PhotonVMTX, err)
	}
	if len(items) > 0 {
		return nil
	}
	source, err := s.finder.VirtualMachine(ctx, path.Join("/", Datacenter, "vm", TemplateFolder, PhotonTemplate))
	if err != nil {
		return fmt.Errorf("source of %s: %w", PhotonVMTX, err)
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
		Name: PhotonVMTX, Description: "Photon OS 5 as a VM template", Library: ids[0], SourceVM: source.Reference().Value,
		Placement: &vcenter.Placement{Folder: folder.Reference().Value, ResourcePool: pool.Reference().Value},
	})
	if err != nil {
		return fmt.Errorf("create VM template item %s: %w", PhotonVMTX, err)
	}
	return nil
}
