package main

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
	"github.com/vmop/vmop/services/power"
)

const webGroup = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineGroup
metadata:
  name: web
spec:
  powerState: PoweredOn
  powerOffMode: Hard
  bootOrder:
  - members:
    - name: web-db
      kind: VirtualMachine
    powerOnDelay: 2s
  - members:
    - name: web-app1
    - name: web-app2
    powerOnDelay: 2s
  - members:
    - name: web-front
`

// TestGroupBootOrder is issue #4's group acceptance through the REST API with every
// service running: three boot-order steps with 2 s delays power on in order, the delays
// visible in vCenter's task times; power-off is immediate; the group's status shows its
// members and Ready.
func TestGroupBootOrder(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	steps := [][]string{{"web-db"}, {"web-app1", "web-app2"}, {"web-front"}}
	var docs []string
	for _, step := range steps {
		for _, name := range step {
			docs = append(docs, strings.Replace(vmNamed(name, ""), "spec:\n", "spec:\n  groupName: web\n  powerState: PoweredOff\n", 1))
		}
	}
	tp.apply(strings.Join(docs, "---\n"), "")
	for _, step := range steps {
		for _, name := range step {
			tp.waitPower(name, "PoweredOff")
		}
	}

	tp.apply(webGroup, "")
	g := tp.waitGroup("all members on", "PoweredOn", 4)
	stamp := g.Annotations[model.AnnotationLastUpdatedPowerStateTime]
	if g.Status.LastUpdatedPowerStateTime == nil {
		t.Errorf("no status.lastUpdatedPowerStateTime")
	}
	changed, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		t.Fatalf("last-updated annotation %q: %v", stamp, err)
	}
	base := changed.Add(power.BootLead)
	for i, want := range []string{"web-db", "web-app1", "web-app2", "web-front"} {
		if m := g.Status.Members[i]; m.Name != want || m.UID == "" || m.PowerState == nil || *m.PowerState != model.PowerStateOn {
			t.Errorf("member %d: %+v, want %s powered on", i, m, want)
		}
	}

	// vCenter's power-on tasks: one per VM, none before its step's instant, one step's
	// members together, the steps the delays apart.
	const delay, lateBy, together = 2 * time.Second, time.Second, 500 * time.Millisecond
	starts := taskStarts(t, vc, "VirtualMachine.powerOn")
	var prev time.Time
	for k, step := range steps {
		at := base.Add(time.Duration(k) * delay)
		var first, last time.Time
		for _, name := range step {
			s := starts[tp.vm(vc, name).Reference()]
			if len(s) != 1 {
				t.Errorf("%s: %d power-on tasks, want 1", name, len(s))
				continue
			}
			if s[0].Before(at) || s[0].After(at.Add(lateBy)) {
				t.Errorf("%s: powered on %v after step %d's instant, want within [0, %v]", name, s[0].Sub(at), k, lateBy)
			}
			if first.IsZero() || s[0].Before(first) {
				first = s[0]
			}
			if s[0].After(last) {
				last = s[0]
			}
		}
		t.Logf("step %d: instant +%v, power-on tasks started +%v .. +%v", k, at.Sub(base), first.Sub(base), last.Sub(base))
		if last.Sub(first) > together {
			t.Errorf("step %d: members powered on %v apart, want at most %v", k, last.Sub(first), together)
		}
		if k > 0 && first.Sub(prev) < delay-together {
			t.Errorf("steps %d and %d powered on %v apart, want about %v", k-1, k, first.Sub(prev), delay)
		}
		prev = first
	}

	tp.kubectl("patch", "vmg", "web", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"powerState":"PoweredOff"}}`)
	g = tp.waitGroup("all members off", "PoweredOff", 4)
	offAt, err := time.Parse(time.RFC3339Nano, g.Annotations[model.AnnotationLastUpdatedPowerStateTime])
	if err != nil {
		t.Fatal(err)
	}
	offs := taskStarts(t, vc, "VirtualMachine.powerOff")
	for _, step := range steps {
		for _, name := range step {
			s := offs[tp.vm(vc, name).Reference()]
			if len(s) != 1 || s[0].Before(offAt) || s[0].After(offAt.Add(lateBy)) {
				t.Errorf("%s: power-off tasks %v, want one within %v of %s", name, s, lateBy, offAt)
			}
		}
	}
}

// waitGroup waits until the group's Ready is True with n members, each VM in state, and
// returns it as served.
func (tp *topology) waitGroup(what string, state model.PowerState, n int) model.VirtualMachineGroup {
	tp.t.Helper()
	var g model.VirtualMachineGroup
	tp.eventually("group "+what, func() bool {
		out, err := tp.kubectlErr("get", "vmg", "web", "-n", "my-namespace", "-o", "json")
		g = model.VirtualMachineGroup{}
		if err != nil || json.Unmarshal([]byte(out), &g) != nil || len(g.Status.Members) != n {
			return false
		}
		for _, c := range g.Status.Conditions {
			if c.Type == model.ConditionReady && c.Status != "True" {
				return false
			}
		}
		for _, m := range g.Status.Members {
			if m.PowerState == nil || *m.PowerState != state {
				return false
			}
		}
		return len(g.Status.Conditions) > 0
	})
	return g
}

// taskStarts are the start times of vCenter's recent tasks with descriptionID by entity.
func taskStarts(t *testing.T, vc *govmomi.Client, descriptionID string) map[types.ManagedObjectReference][]time.Time {
	t.Helper()
	pc := property.DefaultCollector(vc.Client)
	var tm mo.TaskManager
	if err := pc.RetrieveOne(t.Context(), *vc.ServiceContent.TaskManager, []string{"recentTask"}, &tm); err != nil {
		t.Fatal(err)
	}
	var tasks []mo.Task
	if len(tm.RecentTask) > 0 {
		if err := pc.Retrieve(t.Context(), tm.RecentTask, []string{"info"}, &tasks); err != nil {
			t.Fatal(err)
		}
	}
	starts := map[types.ManagedObjectReference][]time.Time{}
	for _, task := range tasks {
		if task.Info.DescriptionId == descriptionID && task.Info.Entity != nil && task.Info.StartTime != nil {
			starts[*task.Info.Entity] = append(starts[*task.Info.Entity], *task.Info.StartTime)
		}
	}
	for _, s := range starts {
		sort.Slice(s, func(i, j int) bool { return s[i].Before(s[j]) })
	}
	return starts
}
