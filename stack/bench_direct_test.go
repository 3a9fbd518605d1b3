package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/rest"
	vapi "github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"

	"github.com/vmop/vmop/pkg/inventory"
	vmopvc "github.com/vmop/vmop/pkg/vcenter"
)

// The class my-vm-class: what the direct path gives each VM at deploy.
const (
	benchCPUs     = 2
	benchMemoryMB = 4096
)

// directPath is the baseline: the VMs' vCenter work done with govmomi and nothing else.
type directPath struct {
	c      *govmomi.Client
	rest   *rest.Client
	item   string // the library item of the seed image
	folder *object.Folder
	zones  []directZone
}

type directZone struct {
	pool      types.ManagedObjectReference
	datastore types.ManagedObjectReference
}

// connectDirect logs in to vCenter and looks up what a deploy needs, as placement does
// once: the image's library item, the VM folder, each zone's resource pool and datastore.
func connectDirect(b *testing.B, e vmopvc.Endpoint) *directPath {
	b.Helper()
	ctx := context.Background()
	c, err := vmopvc.Connect(ctx, e)
	if err != nil {
		b.Fatal(err)
	}
	rc, err := vmopvc.LoginREST(ctx, c, e.URL.User)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = rc.Logout(context.Background())
		_ = c.Logout(context.Background())
	})
	d := &directPath{c: c, rest: rc}
	libs := library.NewManager(rc)
	libIDs, err := libs.FindLibrary(ctx, library.Find{Name: inventory.Library.Name})
	if err != nil || len(libIDs) != 1 {
		b.Fatalf("library %s: %v %v", inventory.Library.Name, libIDs, err)
	}
	itemIDs, err := libs.FindLibraryItems(ctx, library.FindItem{LibraryID: libIDs[0], Name: inventory.PhotonImage})
	if err != nil || len(itemIDs) != 1 {
		b.Fatalf("library item %s: %v %v", inventory.PhotonImage, itemIDs, err)
	}
	d.item = itemIDs[0]
	finder := find.NewFinder(c.Client)
	dc, err := finder.Datacenter(ctx, inventory.Datacenter)
	if err != nil {
		b.Fatal(err)
	}
	finder.SetDatacenter(dc)
	folders, err := dc.Folders(ctx)
	if err != nil {
		b.Fatal(err)
	}
	d.folder = folders.VmFolder
	for _, z := range inventory.Zones {
		pool, err := finder.ResourcePool(ctx, path.Join(dc.InventoryPath, "host", z.Cluster, "Resources"))
		if err != nil {
			b.Fatal(err)
		}
		ds, err := finder.Datastore(ctx, z.Datastore)
		if err != nil {
			b.Fatal(err)
		}
		d.zones = append(d.zones, directZone{pool: pool.Reference(), datastore: ds.Reference()})
	}
	return d
}

// round deploys n VMs (spread over the zones) and powers each on, then powers them off
// and destroys them, benchConcurrency at a time.
func (d *directPath) round(b *testing.B, prefix string, n int) round {
	var mu sync.Mutex
	zone := 0
	return vmRound(b, prefix, n, func(ctx context.Context, name string) (*object.VirtualMachine, error) {
		mu.Lock()
		z := d.zones[zone%len(d.zones)]
		zone++
		mu.Unlock()
		return d.createAndPowerOn(ctx, name, z)
	})
}

// vmRound creates n VMs with create, benchConcurrency at a time, then powers them off
// and destroys them, measuring both phases.
func vmRound(b *testing.B, prefix string, n int, create func(ctx context.Context, name string) (*object.VirtualMachine, error)) round {
	ctx := context.Background()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	cpu := processCPU()
	started := time.Now()
	r := round{n: n}
	vms := make(map[string]*object.VirtualMachine, n)
	var mu sync.Mutex
	parallel(b, names, func(name string) error {
		start := time.Now()
		vm, err := create(ctx, name)
		if err != nil {
			return err
		}
		mu.Lock()
		vms[name] = vm
		r.toOn = append(r.toOn, time.Since(start))
		mu.Unlock()
		return nil
	})
	r.create = time.Since(started)
	r.createCPU = processCPU() - cpu

	deleteStart, cpu := time.Now(), processCPU()
	parallel(b, names, func(name string) error {
		return powerOffAndDestroy(ctx, vms[name])
	})
	r.delete = time.Since(deleteStart)
	r.deleteCPU = processCPU() - cpu
	return r
}

func (d *directPath) createAndPowerOn(ctx context.Context, name string, z directZone) (*object.VirtualMachine, error) {
	vm, err := d.deploy(ctx, name, z, uuid.NewString())
	if err != nil {
		return nil, err
	}
	task, err := vm.PowerOn(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("power on %s: %w", name, err)
	}
	return vm, nil
}

// deploy deploys the image as the class's VM, with the instance UUID, in the zone.
func (d *directPath) deploy(ctx context.Context, name string, z directZone, instanceUUID string) (*object.VirtualMachine, error) {
	cs, err := configSpecXML(types.VirtualMachineConfigSpec{
		NumCPUs: benchCPUs, MemoryMB: benchMemoryMB, InstanceUuid: instanceUUID, Uuid: uuid.NewString(),
	})
	if err != nil {
		return nil, err
	}
	ref, err := vapi.NewManager(d.rest).DeployLibraryItem(ctx, d.item, vapi.Deploy{
		DeploymentSpec: vapi.DeploymentSpec{
			Name: name, DefaultDatastoreID: z.datastore.Value, AcceptAllEULA: true,
			VmConfigSpec: &vapi.VmConfigSpec{Provider: "XML", XML: cs},
		},
		Target: vapi.Target{ResourcePoolID: z.pool.Value, FolderID: d.folder.Reference().Value},
	})
	if err != nil {
		return nil, fmt.Errorf("deploy %s: %w", name, err)
	}
	return object.NewVirtualMachine(d.c.Client, *ref), nil
}

func powerOffAndDestroy(ctx context.Context, vm *object.VirtualMachine) error {
	task, err := vm.PowerOff(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("power off %s: %w", vm.Reference().Value, err)
	}
	if task, err = vm.Destroy(ctx); err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("destroy %s: %w", vm.Reference().Value, err)
	}
	return nil
}

// configSpecXML is the deploy's VmConfigSpec in the XML provider format: base64 of a
// vim25 VirtualMachineConfigSpec element.
func configSpecXML(cs types.VirtualMachineConfigSpec) (string, error) {
	var buf bytes.Buffer
	start := xml.StartElement{Name: xml.Name{Local: "obj"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "xmlns:vim25"}, Value: "urn:vim25"},
		{Name: xml.Name{Local: "xmlns:xsi"}, Value: "http://www.w3.org/2001/XMLSchema-instance"},
		{Name: xml.Name{Local: "xsi:type"}, Value: "vim25:VirtualMachineConfigSpec"},
	}}
	if err := xml.NewEncoder(&buf).EncodeElement(cs, start); err != nil {
		return "", fmt.Errorf("encode config spec: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
