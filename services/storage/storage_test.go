package storage

import (
	"context"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// hardware is spec.hardware as admission leaves it, plus the SCSI controllers given.
func hardware(scsi ...model.SCSIControllerSpec) *model.VirtualMachineHardwareSpec {
	return &model.VirtualMachineHardwareSpec{
		IDEControllers:  []model.IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}},
		SCSIControllers: scsi,
	}
}

// The two-disk image's disks are reported as Classic volumes with their sizes and
// placement, its controllers with the disks on them, and the storage accounting of
// api-rules §3; the LsiLogic controller the spec adds on bus 1 is created once, also
// when the VM is reconciled again. The VM is marked upgraded already, so its disks stay
// unregistered: a registration would give it a second generation, whose report could
// overwrite the first one before this test reads it.
func TestReportsImageDisksAndAddsController(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "two-disks", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class",
		Hardware: hardware(
			model.SCSIControllerSpec{BusNumber: 0, Type: model.SCSIControllerTypeParaVirtual},
			model.SCSIControllerSpec{BusNumber: 1, Type: model.SCSIControllerTypeLsiLogic},
		),
	})
	v.Annotations = model.UpgradedTo(model.BuildVersion)
	v.Put(t, js, false)
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "StorageReady waiting for the VM", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, r := deploytest.Condition(st, model.ConditionStorageReady)
		return s == "False" && r == model.ReasonNotReady
	})
	if st.Volumes != nil || st.Storage != nil {
		t.Errorf("before the VM exists: volumes %v, storage %v; want none", st.Volumes, st.Storage)
	}

	vm := v.Deploy(t, vc, js, inventory.MultiDiskImage)
	slice, st := v.WaitStatus(t, js, model.ServiceStorage, "StorageReady True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, _ := deploytest.Condition(st, model.ConditionStorageReady)
		return s == "True"
	})
	if slice.Generation != 1 || slice.Released {
		t.Errorf("slice generation %d released %v, want 1 and not released", slice.Generation, slice.Released)
	}

	mvm := readTestVM(t, vm)
	devices := object.VirtualDeviceList(mvm.Config.Hardware.Device)
	lsi := devices.SelectByType((*types.VirtualLsiLogicController)(nil))
	if len(lsi) != 1 || lsi[0].(*types.VirtualLsiLogicController).BusNumber != 1 {
		t.Fatalf("LsiLogic controllers in vcsim: %v, want one on bus 1", lsi)
	}

	// Expected values straight from vcsim: the disks in UUID order, their controller.
	disks := devices.SelectByType((*types.VirtualDisk)(nil))
	slices.SortFunc(disks, func(a, b types.BaseVirtualDevice) int {
		return strings.Compare(diskUUID(a), diskUUID(b))
	})
	var wantVols []model.VirtualMachineVolumeStatus
	var wantRequested int64
	for _, d := range disks {
		disk := d.(*types.VirtualDisk)
		file := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo).FileName
		wantRequested += disk.CapacityInBytes
		wantVols = append(wantVols, model.VirtualMachineVolumeStatus{
			Name: baseName(file), Type: model.VolumeTypeClassic, Attached: true, DiskUUID: diskUUID(d),
			ControllerType: model.ControllerTypeSCSI, ControllerBusNumber: ptr[int32](0), UnitNumber: ptr(*disk.UnitNumber),
			DiskMode: model.VolumeDiskModePersistent, SharingMode: model.VolumeSharingModeNone,
			Limit: qty(disk.CapacityInBytes), Requested: qty(disk.CapacityInBytes), Used: qty(fileSize(mvm.LayoutEx, file)),
		})
	}
	if got := []string{st.Volumes[0].Name, st.Volumes[1].Name}; !slices.Equal(sorted(got), []string{"disk-0", "disk-1"}) {
		t.Errorf("volume names %v, want disk-0 and disk-1 (after their files)", got)
	}
	if diff := cmp.Diff(wantVols, st.Volumes, quantityEqual); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	if want := []int64{20 << 30, 50 << 30}; !slices.Equal(sorted([]int64{st.Volumes[0].Limit.Value(), st.Volumes[1].Limit.Value()}), want) {
		t.Errorf("disk sizes %v, want the image's %v", st.Volumes, want)
	}

	scsi0 := devices.SelectByType((*types.ParaVirtualSCSIController)(nil))[0].GetVirtualDevice().Key
	wantCtrls := []model.VirtualControllerStatus{
		{Type: model.ControllerTypeIDE, BusNumber: 0, DeviceKey: 200},
		{Type: model.ControllerTypeIDE, BusNumber: 1, DeviceKey: 201},
		{Type: model.ControllerTypeSCSI, BusNumber: 0, DeviceKey: scsi0, Devices: []model.VirtualDeviceStatus{
			{Type: model.DeviceTypeDisk, UnitNumber: 0}, {Type: model.DeviceTypeDisk, UnitNumber: 1},
		}},
		{Type: model.ControllerTypeSCSI, BusNumber: 1, DeviceKey: lsi[0].GetVirtualDevice().Key},
	}
	if st.Hardware == nil {
		t.Fatal("no status.hardware")
	}
	if diff := cmp.Diff(wantCtrls, st.Hardware.Controllers); diff != "" {
		t.Errorf("controllers (-want +got):\n%s", diff)
	}

	var other int64
	for _, f := range mvm.LayoutEx.File {
		if f.Type != string(types.VirtualMachineFileLayoutExFileTypeDiskDescriptor) && f.Type != string(types.VirtualMachineFileLayoutExFileTypeDiskExtent) {
			other += f.UniqueSize
		}
	}
	var wantUsed int64
	for _, v := range wantVols {
		wantUsed += v.Used.Value()
	}
	wantStorage := &model.VirtualMachineStorageStatus{
		Total:     qty(wantRequested + other),
		Requested: &model.VirtualMachineStorageStatusRequested{Disks: qty(wantRequested)},
		Usage:     &model.VirtualMachineStorageStatusUsage{Disks: qty(wantUsed), Other: qty(other)},
	}
	if diff := cmp.Diff(wantStorage, st.Storage, quantityEqual); diff != "" {
		t.Errorf("storage (-want +got):\n%s", diff)
	}
	if st.Storage.Requested.Disks.String() != "70Gi" {
		t.Errorf("requested.disks = %s, want 70Gi", st.Storage.Requested.Disks)
	}

	// Reconciled again (a new generation, same hardware): nothing more is added.
	v.Sync(t, js)
	v.Put(t, js, false)
	next := v.Generation()
	v.WaitStatus(t, js, model.ServiceStorage, "the next generation", func(s events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionStorageReady)
		return s.Generation == next && c == "True"
	})
	again := object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device)
	if n := len(again.SelectByType((*types.VirtualLsiLogicController)(nil))); n != 1 {
		t.Errorf("%d LsiLogic controllers after a second reconcile, want 1", n)
	}
	if len(again) != len(devices) {
		t.Errorf("%d devices after a second reconcile, want the %d of the first", len(again), len(devices))
	}
}

// Without a usable storage class the VM is not storage-ready, with the reason saying why;
// the check needs no vSphere VM.
func TestStorageClassProblems(t *testing.T) {
	js := startService(t)
	tests := []struct {
		name, class, reason string
	}{
		{"missing", "", model.ReasonStorageClassRequired},
		{"not-found", "no-such-class", model.ReasonNotFound},
		{"resolves", "my-storage-class", model.ReasonNotReady}, // then it only waits for the VM
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := deploytest.NewVM("my-namespace", "class-"+tt.name, model.VirtualMachineSpec{StorageClass: tt.class, Hardware: hardware()})
			v.Put(t, js, false)
			v.WaitStatus(t, js, model.ServiceStorage, "reason "+tt.reason, func(_ events.Slice, st model.VirtualMachineStatus) bool {
				s, r := deploytest.Condition(st, model.ConditionStorageReady)
				return s == "False" && r == tt.reason
			})
		})
	}
}

// A VM marked for deletion is released at once, keeping its last report.
func TestReleasesOnDelete(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "going", model.VirtualMachineSpec{StorageClass: "my-storage-class", Hardware: hardware()})
	v.Put(t, js, false)
	v.WaitStatus(t, js, model.ServiceStorage, "a first slice", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Generation == 1 })
	v.Put(t, js, true)
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	if s, _ := deploytest.Condition(st, model.ConditionStorageReady); s == "" {
		t.Error("the released slice dropped the last report")
	}
}

func readTestVM(t testing.TB, vm *object.VirtualMachine) mo.VirtualMachine {
	t.Helper()
	var out mo.VirtualMachine
	if err := vm.Properties(context.Background(), vm.Reference(), []string{"config.hardware.device", "layoutEx"}, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func diskUUID(d types.BaseVirtualDevice) string {
	return d.(*types.VirtualDisk).Backing.(*types.VirtualDiskFlatVer2BackingInfo).Uuid
}

// fileSize is the unique size of the layoutEx file named name.
func fileSize(l *types.VirtualMachineFileLayoutEx, name string) int64 {
	for _, f := range l.File {
		if f.Name == name {
			return f.UniqueSize
		}
	}
	return 0
}

// baseName is "[ds] dir/disk-0.vmdk" → "disk-0".
func baseName(file string) string {
	return strings.TrimSuffix(path.Base(file), ".vmdk")
}

func qty(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.BinarySI) }

var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func sorted[T int64 | string](s []T) []T { slices.Sort(s); return s }
