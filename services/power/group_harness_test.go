package power_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"

	"github.com/google/uuid"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
	"github.com/vmop/vmop/services/power"
)

// groupHarness is a harness whose power service a test may stop and start again, and
// whose VMs' other inputs follow every new generation of their spec at once, as storage,
// network and crypto do when a group changes a member's power state.
type groupHarness struct {
	*harness
	vcenter vcenter.Endpoint
	mu      sync.Mutex
	stop    func() // stops the running service; nil when stopped
}

func startGroups(t *testing.T) *groupHarness {
	t.Helper()
	ctx := t.Context()
	sim, vc := startSim(t)
	js, _ := eventstest.JetStream(t)
	h := &groupHarness{harness: &harness{t: t, ctx: ctx, js: js, vc: vc}, vcenter: sim.Endpoint()}
	h.followInputs()
	h.run()
	t.Cleanup(h.halt)
	return h
}

// run starts the power service.
func (h *groupHarness) run() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() {
		done <- power.Run(ctx, power.Config{
			JetStream: h.js, VCenter: h.vcenter,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
	}()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				h.t.Errorf("Run: %v", err)
			}
		case <-time.After(deadline):
			h.t.Error("Run did not return after its context ended")
		}
	}
}

// halt stops the power service and returns once it has.
func (h *groupHarness) halt() {
	h.mu.Lock()
	stop := h.stop
	h.stop = nil
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// followInputs publishes storage, network and crypto ready for every new generation of a
// VM's spec: the VM's power-on waits for them to speak about the current spec.
func (h *groupHarness) followInputs() {
	h.t.Helper()
	cons, err := h.js.OrderedConsumer(h.ctx, events.StreamSpecs, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.SpecFilter("virtualmachines")},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		rec, err := events.ParseSpecMsg(msg)
		if err != nil || rec.Op != events.OpPut {
			return
		}
		var vm model.VirtualMachine
		if json.Unmarshal(rec.Body, &vm) != nil {
			return
		}
		for _, svc := range []string{model.ServiceStorage, model.ServiceNetwork, model.ServiceCrypto} {
			var conds []metav1.Condition
			for _, typ := range inputConditions[svc] {
				conds = append(conds, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: model.ReasonTrue,
					ObservedGeneration: vm.Generation, LastTransitionTime: metav1.Now().Rfc3339Copy()})
			}
			raw, _ := json.Marshal(map[string]any{"conditions": conds})
			s := events.Slice{Service: svc, UID: string(vm.UID), Generation: vm.Generation, Status: raw}
			if _, err := events.PublishStatus(h.ctx, h.js, rec.Ref, s); err != nil && h.ctx.Err() == nil {
				h.t.Errorf("publish %s for %s: %v", svc, rec.Ref, err)
			}
		}
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(cc.Stop)
}

// member creates a VM desired PoweredOff in group, with every input ready, and waits
// until power reports it off.
func (h *groupHarness) member(name, group string) *testVM {
	h.t.Helper()
	v := h.createVM(name)
	v.obj.Spec.PowerState = model.PowerStateOff
	v.obj.Spec.GroupName = group
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "powered off", synced(model.PowerStateOff))
	return v
}

// putGroup creates the group or changes the stored one with edit, through the gateway's
// defaulting and validation for groups, and returns it as stored.
func (h *groupHarness) putGroup(name string, edit func(g *model.VirtualMachineGroup)) model.VirtualMachineGroup {
	h.t.Helper()
	ref := groupRef(name)
	var g model.VirtualMachineGroup
	var old *model.VirtualMachineGroup
	var seq uint64
	rec, err := events.LastSpec(h.ctx, h.js, ref)
	switch {
	case errors.Is(err, events.ErrNotFound):
		g.APIVersion, g.Kind = "vmoperator.vmware.com/v1alpha5", "VirtualMachineGroup"
		g.Name, g.Namespace, g.UID, g.Generation = name, namespace, apitypes.UID(uuid.NewString()), 1
	case err != nil:
		h.t.Fatal(err)
	default:
		seq, old = rec.Seq, &model.VirtualMachineGroup{}
		if err := json.Unmarshal(rec.Body, old); err != nil {
			h.t.Fatal(err)
		}
		if err := json.Unmarshal(rec.Body, &g); err != nil {
			h.t.Fatal(err)
		}
		g.Generation++
	}
	edit(&g)
	env := model.GroupEnv{Now: time.Now}
	if ferr := model.DefaultVirtualMachineGroup(&g, old, env); ferr != nil {
		h.t.Fatal(ferr)
	}
	if errs := model.ValidateVirtualMachineGroup(&g, old, env); len(errs) > 0 {
		h.t.Fatal(errs.ToAggregate())
	}
	body, err := json.Marshal(g)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := events.AppendSpec(h.ctx, h.js, ref, events.OpPut, body, seq, nil); err != nil {
		h.t.Fatal(err)
	}
	return g
}

func groupRef(name string) events.Ref {
	return events.Ref{Plural: "virtualmachinegroups", Namespace: namespace, Name: name}
}

// step is a boot-order entry of VMs with the delay before the next one.
func step(delay time.Duration, vms ...*testVM) model.VirtualMachineGroupBootOrderGroup {
	s := model.VirtualMachineGroupBootOrderGroup{PowerOnDelay: &metav1.Duration{Duration: delay}}
	for _, v := range vms {
		s.Members = append(s.Members, model.GroupMember{Kind: model.GroupMemberKindVirtualMachine, Name: v.ref.Name})
	}
	return s
}

// groupSlice is power's newest slice about a group, decoded.
type groupSlice struct {
	Members                   []model.VirtualMachineGroupMemberStatus `json:"members"`
	LastUpdatedPowerStateTime string                                  `json:"lastUpdatedPowerStateTime"`
	Conditions                []metav1.Condition                      `json:"conditions"`
}

// waitGroup waits for power's slice about the group to satisfy ok.
func (h *groupHarness) waitGroup(name, what string, ok func(groupSlice) bool) groupSlice {
	h.t.Helper()
	var last groupSlice
	var raw json.RawMessage
	h.waitUntil("group "+name+": "+what, func() bool {
		rec, err := events.LastStatus(h.ctx, h.js, groupRef(name), model.ServicePower)
		if err != nil {
			return false
		}
		raw = rec.Slice.Status
		last = groupSlice{}
		return json.Unmarshal(rec.Slice.Status, &last) == nil && ok(last)
	}, func() string { return string(raw) })
	return last
}

// groupReady: Ready is True and every member is linked and in the group's power state.
func groupReady(n int, state model.PowerState) func(groupSlice) bool {
	return func(s groupSlice) bool {
		ready := findCondition(s.Conditions, model.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || len(s.Members) != n {
			return false
		}
		for _, m := range s.Members {
			linked := findCondition(m.Conditions, model.ConditionGroupLinked)
			synced := findCondition(m.Conditions, model.ConditionMemberPowerStateSynced)
			if linked == nil || linked.Status != metav1.ConditionTrue || synced == nil || synced.Status != metav1.ConditionTrue {
				return false
			}
			if m.Kind == model.GroupMemberKindVirtualMachine && (m.PowerState == nil || *m.PowerState != state) {
				return false
			}
		}
		return true
	}
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// taskStarts are the start times of vCenter's tasks with descriptionID (e.g.
// "VirtualMachine.powerOn") by VM, oldest first: what vCenter's task list shows.
func (h *groupHarness) taskStarts(descriptionID string) map[types.ManagedObjectReference][]time.Time {
	h.t.Helper()
	pc := property.DefaultCollector(h.vc.Client)
	var tm mo.TaskManager
	if err := pc.RetrieveOne(h.ctx, *h.vc.ServiceContent.TaskManager, []string{"recentTask"}, &tm); err != nil {
		h.t.Fatal(err)
	}
	var tasks []mo.Task
	if len(tm.RecentTask) > 0 {
		if err := pc.Retrieve(h.ctx, tm.RecentTask, []string{"info"}, &tasks); err != nil {
			h.t.Fatal(err)
		}
	}
	starts := map[types.ManagedObjectReference][]time.Time{}
	for _, t := range tasks {
		if t.Info.DescriptionId == descriptionID && t.Info.Entity != nil && t.Info.StartTime != nil {
			starts[*t.Info.Entity] = append(starts[*t.Info.Entity], *t.Info.StartTime)
		}
	}
	for _, s := range starts {
		sort.Slice(s, func(i, j int) bool { return s[i].Before(s[j]) })
	}
	return starts
}

// annotation is the VM's stored annotation key.
func (h *groupHarness) annotation(v *testVM, key string) string {
	h.t.Helper()
	rec, err := events.LastSpec(h.ctx, h.js, v.ref)
	if err != nil {
		h.t.Fatal(err)
	}
	var vm model.VirtualMachine
	if err := json.Unmarshal(rec.Body, &vm); err != nil {
		h.t.Fatal(err)
	}
	return vm.Annotations[key]
}

// parseInstant parses an RFC3339Nano annotation value.
func parseInstant(t *testing.T, v string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		t.Fatalf("instant %q: %v", v, err)
	}
	return at
}
