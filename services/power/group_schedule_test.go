package power

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/model"
)

func bootGroup(state model.PowerState, annotations map[string]string, steps ...[]string) *model.VirtualMachineGroup {
	g := &model.VirtualMachineGroup{}
	g.Name, g.Annotations, g.Spec.PowerState = "g", annotations, state
	for i, names := range steps {
		s := model.VirtualMachineGroupBootOrderGroup{PowerOnDelay: &metav1.Duration{Duration: time.Duration(i+1) * time.Second}}
		for _, n := range names {
			kind := ""
			if n == "child" {
				kind = model.GroupMemberKindVirtualMachineGroup
			}
			s.Members = append(s.Members, model.GroupMember{Name: n, Kind: kind})
		}
		g.Spec.BootOrder = append(g.Spec.BootOrder, s)
	}
	return g
}

func vmKey(name string) memberKey {
	return memberKey{Kind: model.GroupMemberKindVirtualMachine, Name: name}
}

// Entry k powers on at base plus the delays of the entries before it (api-rules §9.3: the
// first entry's delay holds the second back, the last entry's delay nothing); power-off
// and suspend apply to all at base.
func TestInstants(t *testing.T) {
	base := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	steps := [][]string{{"a"}, {"b1", "b2", "child"}, {"c", "a"}}
	got := instants(bootGroup(model.PowerStateOn, nil, steps...), base)
	want := map[memberKey]time.Time{
		vmKey("a"):  base, // listed twice (VMG-4 forbids it): the first entry counts
		vmKey("b1"): base.Add(time.Second), vmKey("b2"): base.Add(time.Second),
		{Kind: model.GroupMemberKindVirtualMachineGroup, Name: "child"}: base.Add(time.Second),
		vmKey("c"): base.Add(3 * time.Second),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("power-on instants (-want +got):\n%s", d)
	}
	for _, state := range []model.PowerState{model.PowerStateOff, model.PowerStateSuspended} {
		for k, at := range instants(bootGroup(state, nil, steps...), base) {
			if !at.Equal(base) {
				t.Errorf("%s: %s at %v, want the base", state, k, at)
			}
		}
	}
}

// The base is the parent's apply time when there is one, else the last-updated stamp, a
// second later for a power-on with delays.
func TestScheduleBase(t *testing.T) {
	const updated, applied = "2025-01-02T03:04:05.123456789Z", "2025-01-02T03:04:09.5Z"
	const updatedAndLead = "2025-01-02T03:04:06.123456789Z"
	delayed := [][]string{{"a"}, {"b"}} // bootGroup gives each step a delay
	for _, c := range []struct {
		state       model.PowerState
		steps       [][]string
		annotations map[string]string
		want        string
		fails       bool
	}{
		{state: model.PowerStateOn, annotations: map[string]string{model.AnnotationLastUpdatedPowerStateTime: updated}, want: updated},
		{state: model.PowerStateOn, steps: delayed, annotations: map[string]string{model.AnnotationLastUpdatedPowerStateTime: updated}, want: updatedAndLead},
		{state: model.PowerStateOff, steps: delayed, annotations: map[string]string{model.AnnotationLastUpdatedPowerStateTime: updated}, want: updated},
		{state: model.PowerStateOn, steps: delayed, annotations: map[string]string{model.AnnotationLastUpdatedPowerStateTime: updated, model.AnnotationApplyPowerStateTime: applied}, want: applied},
		{state: model.PowerStateOn, annotations: map[string]string{model.AnnotationLastUpdatedPowerStateTime: "yesterday"}, fails: true},
		{state: model.PowerStateOn, annotations: nil, fails: true},
	} {
		got, err := scheduleBase(bootGroup(c.state, c.annotations, c.steps...))
		if c.fails != (err != nil) || (!c.fails && formatInstant(got) != c.want) {
			t.Errorf("%v: got %v, %v; want %q (fails %v)", c.annotations, got, err, c.want, c.fails)
		}
	}
}

// A change is due while the stamp is newer than what was applied, to the nanosecond:
// two changes within one second are two changes.
func TestPendingChange(t *testing.T) {
	const stamp = "2025-01-02T03:04:05.9Z"
	for _, c := range []struct {
		state   model.PowerState
		stamp   string
		applied string
		want    bool
	}{
		{state: model.PowerStateOn, stamp: stamp, applied: "", want: true},
		{state: model.PowerStateOn, stamp: stamp, applied: "2025-01-02T03:04:05.1Z", want: true},
		{state: model.PowerStateOn, stamp: stamp, applied: stamp, want: false},
		{state: model.PowerStateOn, stamp: stamp, applied: "2025-01-02T03:04:06Z", want: false},
		{state: "", stamp: stamp, applied: "", want: false}, // no power state: members are left alone
		{state: model.PowerStateOff, stamp: "", applied: "", want: false},
	} {
		g := bootGroup(c.state, map[string]string{model.AnnotationLastUpdatedPowerStateTime: c.stamp})
		got, _, err := changeDue(g, c.applied)
		if err != nil || got != c.want {
			t.Errorf("%+v: due %v, %v; want %v", c, got, err, c.want)
		}
	}
}

// The member's record keeps everything else as stored (unknown fields, exact numbers);
// generation counts a spec change only; the owner reference is added once; a member group
// also gets the stamp that makes it apply the change.
func TestWithPowerChange(t *testing.T) {
	owner := metav1.OwnerReference{APIVersion: "vmoperator.vmware.com/v1alpha5", Kind: "VirtualMachineGroup", Name: "g", UID: types.UID("u-1")}
	stored := `{"metadata":{"name":"m","generation":7,"annotations":{"keep":"me"}},` +
		`"spec":{"groupName":"g","powerState":"PoweredOff","powerOffMode":"Soft","future":{"big":12345678901234567890}}}`
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	change := &powerChange{state: model.PowerStateOn, suspendMode: model.PowerOpModeHard, at: "2025-01-02T03:04:07Z"}

	decode := func(body []byte) map[string]any {
		t.Helper()
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	body, err := withPowerChange([]byte(stored), model.GroupMemberKindVirtualMachine, owner, change, now)
	if err != nil {
		t.Fatal(err)
	}
	want := decode([]byte(`{"metadata":{"name":"m","generation":8,"annotations":{"keep":"me",` +
		`"vmoperator.vmware.com.protected/apply-power-state-time":"2025-01-02T03:04:07Z"},` +
		`"ownerReferences":[{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachineGroup","name":"g","uid":"u-1"}]},` +
		`"spec":{"groupName":"g","powerState":"PoweredOn","powerOffMode":"Soft","suspendMode":"Hard","future":{"big":12345678901234567890}}}`))
	if d := cmp.Diff(want, decode(body)); d != "" {
		t.Errorf("VM member (-want +got):\n%s", d)
	}
	if !json.Valid(body) || !strings.Contains(string(body), "12345678901234567890") {
		t.Errorf("numbers not kept exactly: %s", body)
	}

	// Again with the same change: the spec is unchanged, so is the generation; one owner.
	again, err := withPowerChange(body, model.GroupMemberKindVirtualMachine, owner, change, now)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, decode(again)); d != "" {
		t.Errorf("second write (-want +got):\n%s", d)
	}

	group, err := withPowerChange([]byte(stored), model.GroupMemberKindVirtualMachineGroup, owner, change, now)
	if err != nil {
		t.Fatal(err)
	}
	ann := decode(group)["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ann[model.AnnotationLastUpdatedPowerStateTime] != "2025-01-02T03:04:05Z" {
		t.Errorf("member group's last-updated stamp: %v", ann)
	}
}

func TestReadyCondition(t *testing.T) {
	ok := metav1.Condition{Type: model.ConditionGroupLinked, Status: metav1.ConditionTrue}
	pending := metav1.Condition{Type: model.ConditionMemberPowerStateSynced, Status: metav1.ConditionFalse, Reason: model.ReasonPending}
	_, status, reason, _ := readyCondition(nil)
	if status != metav1.ConditionTrue || reason != model.ReasonTrue {
		t.Errorf("no members: %s %s", status, reason)
	}
	_, status, reason, msg := readyCondition([]model.VirtualMachineGroupMemberStatus{
		{Kind: "VirtualMachine", Name: "a", Conditions: []metav1.Condition{ok}},
		{Kind: "VirtualMachine", Name: "b", Conditions: []metav1.Condition{ok, pending}},
	})
	if want := "1 of 2 members not ready: VirtualMachine/b: PowerStateSynced False (Pending)"; status != metav1.ConditionFalse || reason != model.ReasonMembersNotReady || msg != want {
		t.Errorf("got %s %s %q, want False MembersNotReady %q", status, reason, msg, want)
	}
}
