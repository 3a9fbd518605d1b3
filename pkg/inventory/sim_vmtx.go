package inventory

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// deployAsVM makes vcsim's deploy of a VM template (VMTX) library item give a VM, as
// vCenter's does: vcsim's vAPI copies the item's template VM with CloneVM_Task and
// Template set, for the item's creation and for its deploys alike (vapi/simulator
// cloneVM), so a deployed VM could not be configured or powered on. A copy of a template
// VM of LibraryTemplateFolder, where Seed keeps the items' VMs, is a deploy.
func deployAsVM(ctx *simulator.Context, m *simulator.Method) {
	req, ok := m.Body.(*types.CloneVM_Task)
	if !ok || !req.Spec.Template {
		return
	}
	vm, ok := ctx.Map.Get(req.This).(*simulator.VirtualMachine)
	if !ok || vm.Parent == nil {
		return
	}
	if f, ok := ctx.Map.Get(*vm.Parent).(*simulator.Folder); ok && f.Name == LibraryTemplateFolder {
		req.Spec.Template = false
	}
}
