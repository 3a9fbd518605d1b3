package power

import (
	"crypto/tls"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// simVCenter is vcsim's default vCenter model, without VMs of its own.
func simVCenter(t *testing.T) *govmomi.Client {
	t.Helper()
	m := simulator.VPX()
	m.Machine, m.Host = 0, 0 // one cluster: one resource pool
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Remove)
	m.Service.TLS = new(tls.Config) // net/http's self-signed test certificate
	s := m.Service.NewServer()
	t.Cleanup(s.Close)
	vc, err := vcenter.Connect(t.Context(), vcenter.Endpoint{URL: s.URL, Thumbprint: soap.ThumbprintSHA256(s.Certificate())})
	if err != nil {
		t.Fatal(err)
	}
	return vc
}

// simVM creates a powered-off VM with the given instance UUID and ExtraConfig.
func simVM(t *testing.T, vc *govmomi.Client, name, instanceUUID string, extra ...types.BaseOptionValue) *object.VirtualMachine {
	t.Helper()
	ctx := t.Context()
	finder := find.NewFinder(vc.Client, true)
	dc, err := finder.DefaultDatacenter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	finder.SetDatacenter(dc)
	folder, err := finder.DefaultFolder(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := finder.DefaultResourcePool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task, err := folder.CreateVM(ctx, types.VirtualMachineConfigSpec{
		Name: name, GuestId: "otherGuest64", NumCPUs: 4, MemoryMB: 512, InstanceUuid: instanceUUID,
		Files: &types.VirtualMachineFileInfo{VmPathName: "[LocalDS_0]"}, ExtraConfig: extra,
	}, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return object.NewVirtualMachine(vc.Client, info.Result.(types.ManagedObjectReference))
}

func TestFindVM(t *testing.T) {
	vc := simVCenter(t)
	idA, idB := uuid.NewString(), uuid.NewString()
	a, b := simVM(t, vc, "a", idA), simVM(t, vc, "b", idB)
	gone := simVM(t, vc, "gone", uuid.NewString())
	goneID := gone.Reference().Value
	if task, err := gone.Destroy(t.Context()); err != nil || task.Wait(t.Context()) != nil {
		t.Fatalf("destroy: %v", err)
	}
	tests := []struct {
		name, instanceUUID, uniqueID string
		want                         *object.VirtualMachine // nil: errNoVM
	}{
		{name: "by moref", instanceUUID: idA, uniqueID: a.Reference().Value, want: a},
		{name: "by moref alone", uniqueID: b.Reference().Value, want: b},
		{name: "by instance UUID alone", instanceUUID: idB, want: b},
		{name: "moref of another VM: the instance UUID wins", instanceUUID: idA, uniqueID: b.Reference().Value, want: a},
		{name: "moref of a destroyed VM", instanceUUID: idB, uniqueID: goneID, want: b},
		{name: "nothing matches", instanceUUID: uuid.NewString(), uniqueID: goneID},
		{name: "nothing given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, err := findVM(t.Context(), vc, tt.instanceUUID, tt.uniqueID)
			if tt.want == nil {
				if !errors.Is(err, errNoVM) {
					t.Errorf("findVM: err = %v, want errNoVM", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("findVM: %v", err)
			}
			if obs.vm.Reference() != tt.want.Reference() {
				t.Errorf("found %v, want %v", obs.vm.Reference(), tt.want.Reference())
			}
			if obs.power != model.PowerStateOff || obs.hardware.CPU.Total != 4 || obs.hardware.Memory.Total.String() != "512Mi" || obs.guest.GuestID != "otherGuest64" {
				t.Errorf("observed %s, %+v, %s, %+v", obs.power, *obs.hardware.CPU, obs.hardware.Memory.Total, *obs.guest)
			}
		})
	}
}

// The index maps a VM to its object by the ExtraConfig placement wrote, remembers VMs that
// are not vmop's, and prefers what a reconcile taught it.
func TestVMIndexLookup(t *testing.T) {
	vc := simVCenter(t)
	ours := simVM(t, vc, "ours", uuid.NewString(), &types.OptionValue{Key: vcenter.KeyObject, Value: "my-namespace/web.1"})
	theirs := simVM(t, vc, "theirs", uuid.NewString())
	want := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "web.1"}
	x := newVMIndex()
	tests := []struct {
		name  string
		moref string
		ref   events.Ref
		ok    bool
	}{
		{"vmop's VM", ours.Reference().Value, want, true},
		{"vmop's VM again, from memory", ours.Reference().Value, want, true},
		{"another VM", theirs.Reference().Value, events.Ref{}, false},
		{"no such VM", "vm-999999", events.Ref{}, false},
	}
	for _, tt := range tests {
		ref, ok, err := x.lookup(t.Context(), vc, tt.moref)
		if err != nil || ok != tt.ok || ref != tt.ref {
			t.Errorf("%s: lookup = %v, %v, %v; want %v, %v", tt.name, ref, ok, err, tt.ref, tt.ok)
		}
	}
	taught := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "adopted"}
	x.remember(theirs.Reference().Value, taught)
	if ref, ok, _ := x.lookup(t.Context(), vc, theirs.Reference().Value); !ok || ref != taught {
		t.Errorf("after remember: lookup = %v, %v; want %v", ref, ok, taught)
	}
	x.forget(taught) // read from ExtraConfig again: not vmop's
	if _, ok, _ := x.lookup(t.Context(), vc, theirs.Reference().Value); ok {
		t.Error("after forget: still mapped")
	}
}
