package storage

import (
	"context"
	"path"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// startWithImages runs the service against a fresh NATS holding the inventory's storage
// classes and classes.
func startWithImages(t *testing.T) jetstream.JetStream {
	t.Helper()
	return vc.Serve(t, func(ctx context.Context, js jetstream.JetStream) error {
		return Run(ctx, Config{JetStream: js, VCenter: vc.Sim.Endpoint()})
	}, "storageclasses", "virtualmachineclasses")
}

// seedImage creates the inventory's image of the library item (a namespace image of
// my-namespace, or a cluster image) as the gateway does (with a UID), and returns the
// reference to it; the service reports its status from the item.
func seedImage(t testing.TB, js jetstream.JetStream, kind, item string) model.ImageRef {
	t.Helper()
	for _, o := range vc.Objects {
		meta, _ := o["metadata"].(map[string]any)
		status, _ := o["status"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		if o["kind"] != kind || status["name"] != item || (kind == "VirtualMachineImage" && ns != "my-namespace") {
			continue
		}
		name, _ := meta["name"].(string)
		ref := events.Ref{Plural: pluralClusterImages, Name: name}
		if ns != "" {
			ref = events.Ref{Plural: pluralImages, Namespace: ns, Name: name}
		}
		body := map[string]any{"apiVersion": o["apiVersion"], "kind": kind, "spec": o["spec"],
			"metadata": map[string]any{"name": name, "namespace": ns, "uid": uuid.NewString(), "generation": 1, "labels": meta["labels"]}}
		if err := deploytest.PutObject(t.Context(), js, ref, body); err != nil {
			t.Fatal(err)
		}
		return model.ImageRef{Kind: kind, Name: name}
	}
	t.Fatalf("no %s of item %s", kind, item)
	return model.ImageRef{}
}

// photonCdromVM is a VM of my-namespace with a Photon guest and the CD-ROM entries.
func photonCdromVM(name string, cdroms ...model.VirtualMachineCdromSpec) *deploytest.VM {
	spec := vmSpec()
	spec.GuestID = "vmwarePhoton64Guest"
	spec.Hardware.Cdrom = cdroms
	return upgradedVM("my-namespace", name, spec)
}

// cdromEntry is a CD-ROM entry, placed at IDE 0:unit when unit ≥ 0.
func cdromEntry(name string, img model.ImageRef, unit int32, connected bool) model.VirtualMachineCdromSpec {
	c := model.VirtualMachineCdromSpec{Name: name, Image: img, Connected: &connected, AllowGuestControl: ptr(true)}
	if unit >= 0 {
		c.ControllerType, c.ControllerBusNumber, c.UnitNumber = model.ControllerTypeIDE, ptr(int32(0)), ptr(unit)
	}
	return c
}

// cdromsOf are the VM's CD-ROMs in vcsim by slot.
func cdromsOf(t testing.TB, vm *object.VirtualMachine) map[slot]*types.VirtualCdrom {
	t.Helper()
	devices := object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device)
	out := map[slot]*types.VirtualCdrom{}
	for _, d := range devices.SelectByType((*types.VirtualCdrom)(nil)) {
		s, ok := deviceSlot(devices, d)
		if !ok {
			t.Fatalf("CD-ROM %d has no slot", d.GetVirtualDevice().Key)
		}
		if out[s] != nil {
			t.Fatalf("two CD-ROMs at %s", s)
		}
		out[s] = d.(*types.VirtualCdrom)
	}
	return out
}

// isoFile is the ISO file name backing the CD-ROM, "" for another backing.
func isoFile(d *types.VirtualCdrom) string {
	if b, ok := d.Backing.(*types.VirtualCdromIsoBackingInfo); ok {
		return path.Base(b.FileName)
	}
	return ""
}

// cdromVerified waits for VirtualMachineHardwareCDROMVerified of the current generation
// to have the status.
func cdromVerified(t testing.TB, js jetstream.JetStream, v *deploytest.VM, status string) model.VirtualMachineStatus {
	t.Helper()
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "CDROMVerified "+status, func(s events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionHardwareCDROMVerified)
		return c == status && s.Generation == v.Generation()
	})
	return st
}

// createEmpty creates a powered-off VM without disks in the first zone, as placement
// creates an ISO VM, with vmop's identity, reports it created and destroys it at the end.
func createEmpty(t testing.TB, js jetstream.JetStream, v *deploytest.VM) *object.VirtualMachine {
	t.Helper()
	ctx := t.Context()
	finder, dc, err := vc.Finder(ctx)
	if err != nil {
		t.Fatal(err)
	}
	zone := inventory.Zones[0]
	pool, err := finder.ResourcePool(ctx, path.Join(dc.InventoryPath, "host", zone.Cluster, "Resources"))
	if err != nil {
		t.Fatal(err)
	}
	folders, err := dc.Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task, err := folders.VmFolder.CreateVM(ctx, types.VirtualMachineConfigSpec{
		Name: v.Ref.Name, GuestId: "vmwarePhoton64Guest", InstanceUuid: v.Spec.InstanceUUID,
		Files: &types.VirtualMachineFileInfo{VmPathName: "[" + zone.Datastore + "]"},
		ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: vcenter.KeyObject, Value: v.Ref.Namespace + "/" + v.Ref.Name},
			&types.OptionValue{Key: vcenter.KeyUID, Value: v.UID},
		},
	}, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := vcenter.WaitTask(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	vm := object.NewVirtualMachine(vc.Client.Client, info.Result.(types.ManagedObjectReference))
	deploytest.AfterServices(t, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := deploytest.Destroy(ctx, vm); err != nil {
			t.Errorf("destroy %s: %v", v.Ref.Name, err)
		}
	})
	if err := deploytest.MarkCreated(ctx, js, v.Ref, v.UID, v.Generation()); err != nil {
		t.Fatal(err)
	}
	return vm
}

// vmConfig reads the VM's changed block tracking and devices.
func vmConfig(t testing.TB, vm *object.VirtualMachine) mo.VirtualMachine {
	t.Helper()
	var out mo.VirtualMachine
	if err := vm.Properties(t.Context(), vm.Reference(), []string{"config.hardware.device", "config.changeTrackingEnabled"}, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
