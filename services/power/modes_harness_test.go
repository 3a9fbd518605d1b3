package power_test

import (
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// vcCalls records the SOAP calls made on VMs and plays deaf guests: vcsim's guest
// operations always succeed (notes/vcsim.md P5), a deaf guest ignores shutdown and
// standby requests as a hung guest would.
type vcCalls struct {
	mu     sync.Mutex
	calls  []vcCall
	deaf   map[string]bool                    // by VM moref
	faults map[vcCall][]types.BaseMethodFault // by VM moref and method, not time: what their next calls meet
	refuse map[vcCall]types.BaseMethodFault   // what every call meets until allowed
	once   sync.Once                          // registers the deaf guest
}

type vcCall struct {
	method, vm string
	at         time.Time
}

// watchCalls starts recording on h's vcsim.
func (h *harness) watchCalls() *vcCalls {
	c := &vcCalls{deaf: map[string]bool{}, faults: map[vcCall][]types.BaseMethodFault{}, refuse: map[vcCall]types.BaseMethodFault{}}
	h.sim.Intercept(c.intercept)
	return c
}

func (c *vcCalls) intercept(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
	if m.This.Type != "VirtualMachine" {
		return nil, nil
	}
	c.mu.Lock()
	c.calls = append(c.calls, vcCall{method: m.Name, vm: m.This.Value, at: time.Now()})
	deaf := c.deaf[m.This.Value]
	key := vcCall{method: m.Name, vm: m.This.Value}
	var fault types.BaseMethodFault
	if queued := c.faults[key]; len(queued) > 0 {
		fault, c.faults[key] = queued[0], queued[1:]
	} else if f, ok := c.refuse[key]; ok {
		fault = f
	}
	c.mu.Unlock()
	if fault != nil {
		return nil, fault
	}
	if deaf && (m.Name == "ShutdownGuest" || m.Name == "StandbyGuest") {
		// vcsim serves a call from the session's view of m.This, read after this hook:
		// pointing the call elsewhere is the one way to serve it differently.
		c.once.Do(func() { ctx.Map.Put(&deafGuest{self: deafGuestRef}) })
		m.This = deafGuestRef
	}
	return nil, nil
}

// failNext makes the next calls of method on v's VM meet faults, one each, in order.
func (c *vcCalls) failNext(v *testVM, method string, faults ...types.BaseMethodFault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := vcCall{method: method, vm: v.vm.Reference().Value}
	c.faults[key] = append(c.faults[key], faults...)
}

// refuseAll makes every call of method on v's VM meet fault until allowAll.
func (c *vcCalls) refuseAll(v *testVM, method string, fault types.BaseMethodFault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refuse[vcCall{method: method, vm: v.vm.Reference().Value}] = fault
}

func (c *vcCalls) allowAll(v *testVM, method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.refuse, vcCall{method: method, vm: v.vm.Reference().Value})
}

// makeDeaf makes v's guest ignore shutdown and standby requests.
func (c *vcCalls) makeDeaf(v *testVM) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deaf[v.vm.Reference().Value] = true
}

// times returns when method was called on v's VM.
func (c *vcCalls) times(v *testVM, method string) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var at []time.Time
	for _, call := range c.calls {
		if call.vm == v.vm.Reference().Value && call.method == method {
			at = append(at, call.at)
		}
	}
	return at
}

func (c *vcCalls) count(v *testVM, method string) int { return len(c.times(v, method)) }

// deafGuest serves the guest calls of deaf VMs: it accepts shutdown and standby requests
// and never acts, as a hung guest would.
type deafGuest struct{ self types.ManagedObjectReference }

var deafGuestRef = types.ManagedObjectReference{Type: "DeafGuest", Value: "deaf-guest"}

func (g *deafGuest) Reference() types.ManagedObjectReference { return g.self }

func (*deafGuest) ShutdownGuest(*types.ShutdownGuest) soap.HasFault {
	return &methods.ShutdownGuestBody{Res: new(types.ShutdownGuestResponse)}
}

func (*deafGuest) StandbyGuest(*types.StandbyGuest) soap.HasFault {
	return &methods.StandbyGuestBody{Res: new(types.StandbyGuestResponse)}
}

// use makes h report to t, a subtest, until the returned func restores the test before.
func (h *harness) use(t *testing.T) (restore func()) {
	before := h.t
	h.t = t
	return func() { h.t = before }
}

// change applies edit to v's spec as a new generation and stores it.
func (h *harness) change(v *testVM, edit func(*model.VirtualMachine)) {
	h.t.Helper()
	edit(&v.obj)
	v.obj.Generation++
	h.putSpec(v)
}

// setExtraConfig sets key in v's ExtraConfig in vCenter, as an admin would ("" removes it).
func (h *harness) setExtraConfig(v *testVM, key, value string) {
	h.t.Helper()
	task, err := v.vm.Reconfigure(h.ctx, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
		&types.OptionValue{Key: key, Value: value},
	}})
	if err == nil {
		err = task.Wait(h.ctx)
	}
	if err != nil {
		h.t.Fatalf("set %s: %v", key, err)
	}
}

// fakeTools makes vcsim report VMware Tools running in v's guest (notes/vcsim.md P5).
func (h *harness) fakeTools(v *testVM) {
	h.t.Helper()
	h.setExtraConfig(v, "SET.guest.toolsRunningStatus", string(types.VirtualMachineToolsRunningStatusGuestToolsRunning))
}

// extraConfig is the value of key in v's ExtraConfig, "" when absent.
func (h *harness) extraConfig(v *testVM, key string) string {
	h.t.Helper()
	var o mo.VirtualMachine
	if err := v.vm.Properties(h.ctx, v.vm.Reference(), []string{`config.extraConfig["` + key + `"]`}, &o); err != nil {
		h.t.Fatal(err)
	}
	if o.Config == nil {
		return ""
	}
	for _, opt := range o.Config.ExtraConfig {
		if kv := opt.GetOptionValue(); kv.Key == key {
			s, _ := kv.Value.(string)
			return s
		}
	}
	return ""
}

// askRestart asks for a restart of v now by mode and returns its time.
func (h *harness) askRestart(v *testVM, mode model.PowerOpMode) time.Time {
	h.t.Helper()
	at := time.Now().UTC()
	h.change(v, func(vm *model.VirtualMachine) {
		vm.Spec.NextRestartTime, vm.Spec.RestartMode = at.Format(time.RFC3339Nano), mode
	})
	return at
}

// waitRestarted waits until power reports v running, restarted at at.
func (h *harness) waitRestarted(v *testVM, at time.Time) {
	h.t.Helper()
	h.waitStatus(v, "restarted", func(s sliceStatus) bool {
		return synced(model.PowerStateOn)(s) && s.Status.LastRestartTime != nil && s.Status.LastRestartTime.Unix() == at.Unix()
	})
}
