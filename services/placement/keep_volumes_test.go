package placement

import (
	"strings"
	"sync"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// Deleting a VM takes its claims' disks (first-class disks, named by vDiskId) off it before
// the destroy, without deleting their files: the claims outlive the VM. Its own disks go
// with it.
func TestDeleteKeepsClaimDisks(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.runService()
	v := newTestVM("keeps-volumes")
	h.putVM(v, false)
	_, st := h.waitSlice(v.ref, "created", created)

	// A claim's disk, as storage attaches it: a disk backed by the volume's file, tagged
	// with the volume's ID.
	vm := object.NewVirtualMachine(h.vc.Client, types.ManagedObjectReference{Type: "VirtualMachine", Value: st.UniqueID})
	devices, err := vm.Device(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var files mo.VirtualMachine
	if err := vm.Properties(h.ctx, vm.Reference(), []string{"config.files.vmPathName"}, &files); err != nil {
		t.Fatal(err)
	}
	dir := files.Config.Files.VmPathName[:strings.LastIndex(files.Config.Files.VmPathName, "/")+1]
	disk := devices.CreateDisk(devices.PickController((*types.VirtualSCSIController)(nil)), types.ManagedObjectReference{}, dir+"volume.vmdk")
	disk.CapacityInKB = 1024
	disk.VDiskId = &types.ID{Id: "volume-" + v.uid[:8]}
	task, err := vm.Reconfigure(h.ctx, types.VirtualMachineConfigSpec{DeviceChange: []types.BaseVirtualDeviceConfigSpec{
		&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, FileOperation: types.VirtualDeviceConfigSpecFileOperationCreate, Device: disk}}})
	if err == nil {
		_, err = vcenter.WaitTask(h.ctx, task)
	}
	if err != nil {
		t.Fatal(err)
	}

	// What the reconfigures on this VM removed, and whether the destroy came after.
	var mu sync.Mutex
	var removed []string
	destroyedAfter := false
	seeded.sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		if m.This.Value != st.UniqueID {
			return nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		switch req := m.Body.(type) {
		case *types.ReconfigVM_Task:
			for _, c := range req.Spec.DeviceChange {
				spec := c.GetVirtualDeviceConfigSpec()
				if d, ok := spec.Device.(*types.VirtualDisk); ok && spec.Operation == types.VirtualDeviceConfigSpecOperationRemove {
					removed = append(removed, d.VDiskId.Id+" file operation "+string(spec.FileOperation))
				}
			}
		case *types.Destroy_Task:
			destroyedAfter = len(removed) > 0
		}
		return nil, nil
	})
	t.Cleanup(func() { seeded.sim.Intercept(nil) })

	h.putVM(v, true)
	h.waitSlice(v.ref, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	mu.Lock()
	defer mu.Unlock()
	if want := "volume-" + v.uid[:8] + " file operation "; len(removed) != 1 || removed[0] != want || !destroyedAfter {
		t.Errorf("removed before the destroy: %q (destroy after: %v), want [%q]", removed, destroyedAfter, want)
	}
	if n := len(h.vmsOf(v.uid)); n != 0 {
		t.Errorf("%d VMs after the delete, want 0", n)
	}
}
