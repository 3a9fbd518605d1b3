package power_test

import (
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/power"
)

const (
	powerOnTask  = "VirtualMachine.powerOn"
	powerOffTask = "VirtualMachine.powerOff"
	bootDelay    = 2 * time.Second
	// lateBy bounds how long after its instant a step's power-on may start: the member's
	// reconcile and the task. A step is never early; vcsim and the test share one clock.
	lateBy = time.Second
	// together bounds the spread of one step's power-ons.
	together = 500 * time.Millisecond
	// immediate bounds how long after the change every power-off starts: well below the
	// boot delay, so no delay applied (a loaded machine running -race needs about 1.5 s
	// for a change to cross the group, the member's spec and its reconcile).
	immediate = bootDelay * 3 / 4
)

// checkSteps checks vCenter's power-on task of every VM of each step: exactly one, never
// before the step's instant (from, plus bootDelay per step), at most lateBy after it,
// the members of one step together; and the VMs' apply-power-state-time annotations name
// those instants. It returns the first start of each step.
func (h *groupHarness) checkSteps(from time.Time, steps ...[]*testVM) []time.Time {
	h.t.Helper()
	starts := h.taskStarts(powerOnTask)
	var firsts []time.Time
	for k, vms := range steps {
		at := from.Add(time.Duration(k) * bootDelay)
		var first, last time.Time
		for _, v := range vms {
			if got, want := h.annotation(v, model.AnnotationApplyPowerStateTime), at.UTC().Format(time.RFC3339Nano); got != want {
				h.t.Errorf("step %d, %s: apply-power-state-time %q, want %q", k, v.ref.Name, got, want)
			}
			s := starts[v.vm.Reference()]
			if len(s) != 1 {
				h.t.Errorf("step %d, %s: %d power-on tasks, want 1: %v", k, v.ref.Name, len(s), s)
				continue
			}
			if s[0].Before(at) || s[0].After(at.Add(lateBy)) {
				h.t.Errorf("step %d, %s: powered on at %s, %v after the step's instant; want within [0, %v]",
					k, v.ref.Name, s[0].Format(time.RFC3339Nano), s[0].Sub(at), lateBy)
			}
			if first.IsZero() || s[0].Before(first) {
				first = s[0]
			}
			if s[0].After(last) {
				last = s[0]
			}
		}
		if spread := last.Sub(first); spread > together {
			h.t.Errorf("step %d: its members powered on %v apart, want at most %v", k, spread, together)
		}
		h.t.Logf("step %d: instant +%v, power-on tasks started +%v .. +%v", k, at.Sub(from), first.Sub(from), last.Sub(from))
		firsts = append(firsts, first)
	}
	return firsts
}

// checkGaps: the power-ons of consecutive steps are the boot delay apart, the first step
// too (the schedule starts power.BootLead after the change, by when the first step's members
// are ready).
func checkGaps(t *testing.T, firsts []time.Time) {
	t.Helper()
	for k := 1; k < len(firsts); k++ {
		if gap := firsts[k].Sub(firsts[k-1]); gap < bootDelay-together {
			t.Errorf("steps %d and %d powered on %v apart, want about %v", k-1, k, gap, bootDelay)
		}
	}
}

// Three boot-order steps with 2 s delays power on in order with the delays visible in
// vCenter's task times; a VM joining the powered-on group is powered on; power-off is
// immediate for all members. The group reports its members and Ready.
func TestGroupBootOrderAndPowerOff(t *testing.T) {
	h := startGroups(t)
	a, b1, b2, c := h.member("boot-a", "app"), h.member("boot-b1", "app"), h.member("boot-b2", "app"), h.member("boot-c", "app")

	g := h.putGroup("app", func(g *model.VirtualMachineGroup) {
		g.Spec.PowerState = model.PowerStateOn
		g.Spec.PowerOffMode = model.PowerOpModeHard
		g.Spec.BootOrder = append(g.Spec.BootOrder, step(bootDelay, a), step(bootDelay, b1, b2), step(0, c))
	})
	stamp := g.Annotations[model.AnnotationLastUpdatedPowerStateTime]
	base := parseInstant(t, stamp).Add(power.BootLead)

	// Before the last step's instant, the group says who is still to come.
	pending := h.waitGroup("app", "step 3 pending", func(s groupSlice) bool {
		ready := findCondition(s.Conditions, model.ConditionReady)
		return ready != nil && ready.Reason == model.ReasonMembersNotReady && len(s.Members) == 4 &&
			findCondition(s.Members[3].Conditions, model.ConditionMemberPowerStateSynced) != nil &&
			findCondition(s.Members[3].Conditions, model.ConditionMemberPowerStateSynced).Reason == model.ReasonPending
	})
	if time.Now().Before(base.Add(2 * bootDelay)) {
		t.Logf("pending: %s", findCondition(pending.Conditions, model.ConditionReady).Message)
	}

	s := h.waitGroup("app", "every member on", groupReady(4, model.PowerStateOn))
	if s.LastUpdatedPowerStateTime != stamp {
		t.Errorf("lastUpdatedPowerStateTime %q, want %q", s.LastUpdatedPowerStateTime, stamp)
	}
	for i, want := range []string{"boot-a", "boot-b1", "boot-b2", "boot-c"} {
		if m := s.Members[i]; m.Name != want || m.Kind != model.GroupMemberKindVirtualMachine || m.UID == "" {
			t.Errorf("member %d: %s/%s uid %q, want VirtualMachine/%s with its uid", i, m.Kind, m.Name, m.UID, want)
		}
	}
	checkGaps(t, h.checkSteps(base, []*testVM{a}, []*testVM{b1, b2}, []*testVM{c}))

	// A VM naming the powered-on group joins it and is powered on, though created off.
	d := h.createVM("boot-d")
	d.obj.Spec.PowerState, d.obj.Spec.GroupName = model.PowerStateOff, "app"
	h.putSpec(d)
	h.readyInputs(d)
	h.waitGroup("app", "the joined member on", groupReady(5, model.PowerStateOn))
	if got := h.vcPower(d); got != types.VirtualMachinePowerStatePoweredOn {
		t.Errorf("joined member is %s in vCenter", got)
	}

	// Power-off: every member at once, no delays.
	off := h.putGroup("app", func(g *model.VirtualMachineGroup) { g.Spec.PowerState = model.PowerStateOff })
	offAt := parseInstant(t, off.Annotations[model.AnnotationLastUpdatedPowerStateTime])
	h.waitGroup("app", "every member off", groupReady(5, model.PowerStateOff))
	offs := h.taskStarts(powerOffTask)
	var first, last time.Time
	for _, v := range []*testVM{a, b1, b2, c, d} {
		s := offs[v.vm.Reference()]
		if len(s) != 1 {
			t.Errorf("%s: %d power-off tasks, want 1", v.ref.Name, len(s))
			continue
		}
		if s[0].Before(offAt) || s[0].After(offAt.Add(immediate)) {
			t.Errorf("%s: powered off %v after the change, want within %v", v.ref.Name, s[0].Sub(offAt), immediate)
		}
		if first.IsZero() || s[0].Before(first) {
			first = s[0]
		}
		if s[0].After(last) {
			last = s[0]
		}
		if got := h.vcPower(v); got != types.VirtualMachinePowerStatePoweredOff {
			t.Errorf("%s is %s in vCenter", v.ref.Name, got)
		}
	}
	t.Logf("power-off tasks started +%v .. +%v after the change", first.Sub(offAt), last.Sub(offAt))
}

// Stopping the power service in the middle of a boot order and starting it after the
// next step's instant passed neither skips that step nor repeats one: the instants are
// in the members' annotations, and the group does not apply its change twice.
func TestGroupScheduleSurvivesRestart(t *testing.T) {
	h := startGroups(t)
	a, b, c := h.member("restart-a", "db"), h.member("restart-b", "db"), h.member("restart-c", "db")
	g := h.putGroup("db", func(g *model.VirtualMachineGroup) {
		g.Spec.PowerState = model.PowerStateOn
		g.Spec.BootOrder = append(g.Spec.BootOrder, step(bootDelay, a), step(bootDelay, b), step(0, c))
	})
	stamp := g.Annotations[model.AnnotationLastUpdatedPowerStateTime]
	base := parseInstant(t, stamp).Add(power.BootLead)

	h.waitGroup("db", "the change applied", func(s groupSlice) bool { return s.LastUpdatedPowerStateTime == stamp })
	h.waitUntil("step 1 on", func() bool { return h.vcPower(a) == types.VirtualMachinePowerStatePoweredOn }, func() string { return "off" })
	seqs := map[string]uint64{}
	for _, v := range []*testVM{a, b, c} {
		rec, err := events.LastSpec(h.ctx, h.js, v.ref)
		if err != nil {
			t.Fatal(err)
		}
		seqs[v.ref.Name] = rec.Seq
	}
	h.halt()
	if time.Now().After(base.Add(bootDelay)) {
		t.Fatalf("the service stopped %v after the change, after step 2's instant: the test proves nothing", time.Since(base))
	}

	// Down across step 2's instant.
	downUntil := base.Add(bootDelay + bootDelay/2)
	h.waitUntil("step 2's instant passed", func() bool { return time.Now().After(downUntil) }, func() string { return "" })
	if got := h.vcPower(b); got != types.VirtualMachinePowerStatePoweredOff {
		t.Fatalf("step 2 is %s while the service is down", got)
	}
	h.run()

	h.waitGroup("db", "every member on", groupReady(3, model.PowerStateOn))
	starts := h.taskStarts(powerOnTask)
	for k, v := range []*testVM{a, b, c} {
		at := base.Add(time.Duration(k) * bootDelay)
		if k == 1 {
			at = downUntil // the service was down at its instant: it runs on restart
		}
		s := starts[v.vm.Reference()]
		if len(s) != 1 {
			t.Errorf("step %d: %d power-on tasks, want 1: %v", k, len(s), s)
			continue
		}
		if s[0].Before(at) || s[0].After(at.Add(lateBy)) {
			t.Errorf("step %d: powered on %v after %s, want within [0, %v]", k, s[0].Sub(at), at.Format(time.RFC3339Nano), lateBy)
		}
		t.Logf("step %d: power-on task started +%v after the change", k, s[0].Sub(base))
		rec, err := events.LastSpec(h.ctx, h.js, v.ref)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Seq != seqs[v.ref.Name] {
			t.Errorf("step %d: the member was written again after the restart (seq %d, was %d)", k, rec.Seq, seqs[v.ref.Name])
		}
	}
}

// A group in a group's boot order gets its parent's power state and its step's instant,
// and counts its own boot order from there; power-off cascades at once.
func TestNestedGroupCascades(t *testing.T) {
	h := startGroups(t)
	a := h.member("nest-a", "outer")
	b, c := h.member("nest-b", "inner"), h.member("nest-c", "inner")
	h.putGroup("inner", func(g *model.VirtualMachineGroup) {
		g.Spec.GroupName = "outer"
		g.Spec.BootOrder = append(g.Spec.BootOrder, step(bootDelay, b), step(0, c))
	})
	outer := h.putGroup("outer", func(g *model.VirtualMachineGroup) {
		g.Spec.PowerState = model.PowerStateOn
		g.Spec.BootOrder = append(g.Spec.BootOrder, step(bootDelay, a), model.VirtualMachineGroupBootOrderGroup{
			Members: []model.GroupMember{{Kind: model.GroupMemberKindVirtualMachineGroup, Name: "inner"}},
		})
	})
	base := parseInstant(t, outer.Annotations[model.AnnotationLastUpdatedPowerStateTime]).Add(power.BootLead)

	s := h.waitGroup("outer", "every member on", groupReady(2, model.PowerStateOn))
	if ready := findCondition(s.Members[1].Conditions, model.ConditionReady); ready == nil || ready.Status != "True" {
		t.Errorf("the nested group's Ready is not mirrored: %+v", s.Members[1].Conditions)
	}
	h.waitGroup("inner", "every member on", groupReady(2, model.PowerStateOn))
	// a at base; the inner group at base+2s, so b at base+2s and c at base+4s.
	checkGaps(t, h.checkSteps(base, []*testVM{a}, []*testVM{b}, []*testVM{c}))

	h.putGroup("outer", func(g *model.VirtualMachineGroup) { g.Spec.PowerState = model.PowerStateOff })
	h.waitGroup("outer", "every member off", groupReady(2, model.PowerStateOff))
	h.waitGroup("inner", "every member off", groupReady(2, model.PowerStateOff))
	for _, v := range []*testVM{a, b, c} {
		if got := h.vcPower(v); got != types.VirtualMachinePowerStatePoweredOff {
			t.Errorf("%s is %s in vCenter", v.ref.Name, got)
		}
	}
}
