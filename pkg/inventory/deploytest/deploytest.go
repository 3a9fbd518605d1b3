// Package deploytest gives the VM services' tests what placement gives them in production:
// a seeded vcsim, the inventory's API objects in SPECS, and vSphere VMs deployed from the
// content library with vmop's instance UUID and ExtraConfig keys.
package deploytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	vmopvc "github.com/vmop/vmop/pkg/vcenter"
)

// Env is a seeded vcsim with a client logged in to it (SOAP and vAPI).
type Env struct {
	Sim    *inventory.Sim
	Client *govmomi.Client
	// Objects are the API objects describing the inventory (inventory.Objects).
	Objects []map[string]any

	rest *rest.Client
}

// Start starts vcsim, seeds it and reads the inventory's objects. Close it when done.
func Start(ctx context.Context) (*Env, error) {
	sim, err := inventory.StartSim(ctx, inventory.SimConfig{})
	if err != nil {
		return nil, err
	}
	e := &Env{Sim: sim}
	if err := e.init(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *Env) init(ctx context.Context) (err error) {
	if e.Client, err = e.Sim.Client(ctx); err != nil {
		return err
	}
	if err = inventory.Seed(ctx, e.Client, e.Sim.URL.User); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if e.Objects, err = inventory.Objects(ctx, e.Client, e.Sim.URL.User); err != nil {
		return fmt.Errorf("inventory objects: %w", err)
	}
	if e.rest, err = vmopvc.LoginREST(ctx, e.Client, e.Sim.URL.User); err != nil {
		return err
	}
	return nil
}

// Close logs out and stops vcsim.
func (e *Env) Close() {
	ctx := context.Background()
	if e.rest != nil {
		_ = e.rest.Logout(ctx)
	}
	if e.Client != nil {
		_ = e.Client.Logout(ctx)
	}
	e.Sim.Close()
}

// PutObjects appends the inventory objects of the given plurals to SPECS (without their
// status), as the gateway does at startup. Objects already there are left alone.
func (e *Env) PutObjects(ctx context.Context, js jetstream.JetStream, plurals ...string) error {
	want := map[string]bool{}
	for _, p := range plurals {
		want[p] = true
	}
	for _, o := range e.Objects {
		kind, ok := kindOf(o)
		if !ok || !want[kind.Plural] {
			continue
		}
		meta, _ := o["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		name, _ := meta["name"].(string)
		body := map[string]any{}
		for k, v := range o {
			if k != "status" {
				body[k] = v
			}
		}
		if err := PutObject(ctx, js, events.Ref{Plural: kind.Plural, Namespace: ns, Name: name}, body); err != nil {
			return err
		}
	}
	return nil
}

// PutObject appends body as the object's first SPECS record; an object that already has
// one is left alone.
func PutObject(ctx context.Context, js jetstream.JetStream, ref events.Ref, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode %s: %w", ref, err)
	}
	_, err = events.AppendSpec(ctx, js, ref, events.OpPut, raw, 0, nil)
	if errors.Is(err, events.ErrConflict) {
		return nil // the object has a record already
	}
	return err
}

// ReplaceObject appends body as ref's newest record, compare-and-swap on its last one (a
// new object when it has none): an edit, as the gateway stores it.
func ReplaceObject(ctx context.Context, js jetstream.JetStream, ref events.Ref, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode %s: %w", ref, err)
	}
	seq, err := lastSeq(ctx, js, ref)
	if err != nil {
		return err
	}
	_, err = events.AppendSpec(ctx, js, ref, events.OpPut, raw, seq, nil)
	return err
}

// DeleteObject appends ref's tombstone over its last record: the object is gone.
func DeleteObject(ctx context.Context, js jetstream.JetStream, ref events.Ref) error {
	seq, err := lastSeq(ctx, js, ref)
	if err != nil {
		return err
	}
	_, err = events.AppendSpec(ctx, js, ref, events.OpDelete, nil, seq, nil)
	return err
}

// lastSeq is the sequence of ref's last record, 0 for none.
func lastSeq(ctx context.Context, js jetstream.JetStream, ref events.Ref) (uint64, error) {
	rec, err := events.LastSpec(ctx, js, ref)
	if errors.Is(err, events.ErrNotFound) {
		return 0, nil
	}
	return rec.Seq, err
}

func kindOf(o map[string]any) (model.Kind, bool) {
	apiVersion, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	for _, k := range model.Kinds() {
		if k.APIVersion() == apiVersion && k.Kind == kind {
			return k, true
		}
	}
	return model.Kind{}, false
}

// Deploy deploys the namespace library's item (e.g. inventory.PhotonImage) as a VM named
// name in the first zone, then gives it instanceUUID and vmop's ExtraConfig keys naming
// the object ref with uid, as placement does, and the extra ones given (e.g. the applied
// class). It returns the powered-off VM.
func (e *Env) Deploy(ctx context.Context, item, name, instanceUUID string, ref events.Ref, uid string, extra ...types.BaseOptionValue) (*object.VirtualMachine, error) {
	libs := library.NewManager(e.rest)
	libIDs, err := libs.FindLibrary(ctx, library.Find{Name: inventory.Library.Name})
	if err != nil || len(libIDs) != 1 {
		return nil, fmt.Errorf("library %s: %v %w", inventory.Library.Name, libIDs, err)
	}
	itemIDs, err := libs.FindLibraryItems(ctx, library.FindItem{LibraryID: libIDs[0], Name: item})
	if err != nil || len(itemIDs) != 1 {
		return nil, fmt.Errorf("item %s: %v %w", item, itemIDs, err)
	}
	finder, dc, err := e.Finder(ctx)
	if err != nil {
		return nil, err
	}
	zone := inventory.Zones[0]
	pool, err := finder.ResourcePool(ctx, path.Join(dc.InventoryPath, "host", zone.Cluster, "Resources"))
	if err != nil {
		return nil, err
	}
	ds, err := finder.Datastore(ctx, zone.Datastore)
	if err != nil {
		return nil, err
	}
	folders, err := dc.Folders(ctx)
	if err != nil {
		return nil, err
	}
	moref, err := vcenter.NewManager(e.rest).DeployLibraryItem(ctx, itemIDs[0], vcenter.Deploy{
		DeploymentSpec: vcenter.DeploymentSpec{Name: name, DefaultDatastoreID: ds.Reference().Value, AcceptAllEULA: true},
		Target:         vcenter.Target{ResourcePoolID: pool.Reference().Value, FolderID: folders.VmFolder.Reference().Value},
	})
	if err != nil {
		return nil, fmt.Errorf("deploy %s: %w", item, err)
	}
	vm := object.NewVirtualMachine(e.Client.Client, *moref)
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{
		InstanceUuid: instanceUUID,
		ExtraConfig: append([]types.BaseOptionValue{
			&types.OptionValue{Key: vmopvc.KeyObject, Value: ref.Namespace + "/" + ref.Name},
			&types.OptionValue{Key: vmopvc.KeyUID, Value: uid},
		}, extra...),
	})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("give %s its identity: %w", name, err)
	}
	return vm, nil
}

// Destroy removes a VM, powering it off first when needed, and waits until its directory is
// gone: vcsim deletes it in a task of its own after the destroy ends, which races (-race)
// with the next destroy's bookkeeping of the same datastore.
func Destroy(ctx context.Context, vm *object.VirtualMachine) error {
	if state, err := vm.PowerState(ctx); err == nil && state == types.VirtualMachinePowerStatePoweredOn {
		if task, err := vm.PowerOff(ctx); err == nil {
			_ = task.Wait(ctx)
		}
	}
	var m mo.VirtualMachine
	dirGone := func() bool { return true }
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.files.logDirectory", "datastore"}, &m); err == nil && m.Config != nil {
		dirGone = directoryGone(ctx, vm, m)
	}
	task, err := vm.Destroy(ctx)
	if err != nil {
		return err
	}
	if err := task.Wait(ctx); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); !dirGone() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // poll interval of a wait with a deadline
	}
	return nil
}

// directoryGone reports, when called, whether the VM's directory no longer exists.
func directoryGone(ctx context.Context, vm *object.VirtualMachine, m mo.VirtualMachine) func() bool {
	var p object.DatastorePath
	if !p.FromString(m.Config.Files.LogDirectory) {
		return func() bool { return true }
	}
	for _, ref := range m.Datastore {
		ds := object.NewDatastore(vm.Client(), ref)
		if name, err := ds.ObjectName(ctx); err == nil && name == p.Datastore {
			return func() bool {
				_, err := ds.Stat(ctx, p.Path)
				return err != nil
			}
		}
	}
	return func() bool { return true }
}

// MarkCreated publishes a placement slice saying the VM of ref (uid, generation) exists,
// which is what the other services wait for.
func MarkCreated(ctx context.Context, js jetstream.JetStream, ref events.Ref, uid string, generation int64) error {
	status, err := json.Marshal(map[string]any{
		"conditions": []map[string]any{{
			"type": model.ConditionCreated, "status": "True", "reason": "True",
			"observedGeneration": generation, "lastTransitionTime": "2026-01-01T00:00:00Z",
		}},
	})
	if err != nil {
		return err
	}
	_, err = events.PublishStatus(ctx, js, ref, events.Slice{Service: model.ServicePlacement, UID: uid, Generation: generation, Status: status})
	return err
}
