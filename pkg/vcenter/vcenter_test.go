package vcenter_test

import (
	"errors"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/vmop/vmop/pkg/vcenter"
)

func TestConnectAndFindVMByInstanceUUID(t *testing.T) {
	m := simulator.VPX()
	defer m.Remove()
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	s := m.Service.NewServer()
	defer s.Close()
	ctx := t.Context()

	c, err := vcenter.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	vms, err := find.NewFinder(c.Client, true).VirtualMachineList(ctx, "/...")
	if err != nil || len(vms) == 0 {
		t.Fatalf("simulator VMs: %v", err)
	}
	var want mo.VirtualMachine
	if err := vms[0].Properties(ctx, vms[0].Reference(), []string{"config.instanceUuid"}, &want); err != nil {
		t.Fatal(err)
	}
	got, err := vcenter.FindVM(ctx, c, want.Config.InstanceUuid)
	if err != nil {
		t.Fatal(err)
	}
	if got.Reference() != vms[0].Reference() {
		t.Errorf("FindVM = %v, want %v", got.Reference(), vms[0].Reference())
	}
	if _, err := vcenter.FindVM(ctx, c, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, vcenter.ErrNotFound) {
		t.Errorf("FindVM of an unknown UUID: err = %v, want ErrNotFound", err)
	}
}
