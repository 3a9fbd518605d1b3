package crypto

import (
	"context"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// A VM on an encryption storage class has its own disks encrypted with its key, not the
// disk of a claim of another storage class attached to it (a first-class disk, vDiskId),
// which that class encrypts or not.
func TestClaimOfAnotherClassKeepsItsEncryption(t *testing.T) {
	js := startService(t)
	const ns, volumeID = "my-namespace", "fcd-of-plain-claim"
	class := "my-storage-class"
	claim := model.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "plain-data", Namespace: ns, UID: "claim-uid", Generation: 1},
		Spec:       model.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: volumeID},
	}
	if err := deploytest.PutObject(t.Context(), js, events.Ref{Plural: "persistentvolumeclaims", Namespace: ns, Name: claim.Name}, claim); err != nil {
		t.Fatal(err)
	}
	v := deploytest.NewVM(ns, "enc-with-claim", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class",
		Volumes: []model.VirtualMachineVolume{{Name: "data", PersistentVolumeClaim: &model.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}}})
	v.Put(t, js, false)

	// Deployed, with the claim's disk attached, before it is reported created.
	vm, err := vc.Deploy(t.Context(), inventory.PhotonImage, v.Ref.Name, v.Spec.InstanceUUID, v.Ref, v.UID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = deploytest.Destroy(ctx, vm)
	})
	attachClaimDisk(t, vm, volumeID)
	if err := deploytest.MarkCreated(t.Context(), js, v.Ref, v.UID, v.Generation()); err != nil {
		t.Fatal(err)
	}
	synced(t, js, v, 1, "True", "")

	home, _, _ := keys(t, vm)
	if home == nil {
		t.Fatal("the VM home is not encrypted")
	}
	for _, d := range devicesOf(t, vm) {
		disk, ok := d.(*types.VirtualDisk)
		if !ok {
			continue
		}
		key := vcenter.BackingOf(disk).KeyID
		switch claimDisk := disk.VDiskId != nil && disk.VDiskId.Id == volumeID; {
		case claimDisk && key != nil:
			t.Errorf("the claim's disk (another class) was encrypted with %+v", key)
		case !claimDisk && key == nil:
			t.Errorf("the VM's own disk %d was not encrypted", disk.Key)
		}
	}
}

// attachClaimDisk gives vm a new disk standing for a claim's first-class disk (vDiskId id).
func attachClaimDisk(t *testing.T, vm *object.VirtualMachine, id string) {
	t.Helper()
	devices := object.VirtualDeviceList(devicesOf(t, vm))
	ctrl, err := devices.FindDiskController("")
	if err != nil {
		t.Fatal(err)
	}
	disk := devices.CreateDisk(ctrl, types.ManagedObjectReference{}, "")
	disk.CapacityInKB = 1024
	disk.VDiskId = &types.ID{Id: id}
	devices.AssignController(disk, ctrl)
	task, err := vm.Reconfigure(t.Context(), types.VirtualMachineConfigSpec{DeviceChange: []types.BaseVirtualDeviceConfigSpec{
		&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, FileOperation: types.VirtualDeviceConfigSpecFileOperationCreate, Device: disk},
	}})
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
}

func devicesOf(t *testing.T, vm *object.VirtualMachine) []types.BaseVirtualDevice {
	t.Helper()
	devices, err := vm.Device(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return devices
}
