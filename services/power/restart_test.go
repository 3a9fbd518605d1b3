package power_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// One long-lived vCenter, the service restarted 40 times: each run's event collector is
// destroyed when it stops, so the watch of the 41st still starts (vcsim refuses a 33rd
// collector) and sees a power-off behind vmop's back within seconds.
func TestRestartsKeepTheEventWatch(t *testing.T) {
	h := start(t)
	v := h.powered("restarts")
	var watches atomic.Int64 // event watches set up: a collector made and its filter created
	h.sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		if req, ok := m.Body.(*types.CreateFilter); ok && req.Spec.ObjectSet[0].Obj.Type == "EventHistoryCollector" {
			watches.Add(1)
		}
		return nil, nil
	})
	for i := range int64(40) {
		h.stop()
		h.run()
		h.waitUntil(fmt.Sprintf("run %d's event watch", i+1), func() bool { return watches.Load() > i },
			func() string { return fmt.Sprint(watches.Load(), " watches") })
	}

	task, err := v.vm.PowerOff(h.ctx)
	if err == nil {
		err = task.Wait(h.ctx)
	}
	if err != nil {
		t.Fatalf("power off in vCenter: %v", err)
	}
	h.waitUntil("a poweredoff event", func() bool { return h.eventCount(v, events.TypeVirtualMachinePoweredOff) == 1 },
		func() string { return fmt.Sprint(h.eventCount(v, events.TypeVirtualMachinePoweredOff)) })
	h.waitUntil("the VM runs again", func() bool { return h.vcPower(v) == types.VirtualMachinePowerStatePoweredOn },
		func() string { return "not running" })
}

// vCenter forgetting the service's session (as a restart or an expiry does) changes
// nothing for the service: it logs in again, acts on a spec change and watches again.
func TestSessionEndedByVCenter(t *testing.T) {
	h := start(t)
	v := h.powered("relogin")
	own, err := h.vc.SessionManager.UserSession(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sm mo.SessionManager
	if err := h.vc.RetrieveOne(h.ctx, *h.vc.ServiceContent.SessionManager, []string{"sessionList"}, &sm); err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, s := range sm.SessionList {
		if s.Key != own.Key {
			others = append(others, s.Key)
		}
	}
	if len(others) == 0 {
		t.Fatal("no session of the service")
	}
	if err := h.vc.SessionManager.TerminateSession(h.ctx, others); err != nil {
		t.Fatal(err)
	}

	v.obj.Spec.PowerState = model.PowerStateOff
	v.obj.Generation++
	h.putSpec(v)
	h.waitStatus(v, "powered off after the session ended", synced(model.PowerStateOff))
	if s := h.vcPower(v); s != types.VirtualMachinePowerStatePoweredOff {
		t.Errorf("VM is %s, want poweredOff", s)
	}

	// The event watch, whose collectors went with the session, is in place again.
	task, err := v.vm.PowerOn(h.ctx)
	if err == nil {
		err = task.Wait(h.ctx)
	}
	if err != nil {
		t.Fatalf("power on in vCenter: %v", err)
	}
	h.waitUntil("the out-of-band power-on undone", func() bool {
		return h.eventCount(v, events.TypeVirtualMachinePoweredOff) == 2 && h.vcPower(v) == types.VirtualMachinePowerStatePoweredOff
	}, func() string {
		return fmt.Sprint(h.eventCount(v, events.TypeVirtualMachinePoweredOff), " poweredoff events")
	})
}
