package model

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	groupNow     = time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("CET", 3600))
	groupNowStr  = "2025-01-02T02:04:05.000000006Z" // groupNow in UTC, RFC3339Nano
	groupEarlier = "2024-12-31T23:00:00.5Z"
)

func testGroup(change func(g *VirtualMachineGroup)) *VirtualMachineGroup {
	g := &VirtualMachineGroup{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	if change != nil {
		change(g)
	}
	return g
}

func groupPower(p PowerState) func(g *VirtualMachineGroup) {
	return func(g *VirtualMachineGroup) { g.Spec.PowerState = p }
}

func groupAnnotations(kv ...string) func(g *VirtualMachineGroup) {
	return func(g *VirtualMachineGroup) {
		g.Annotations = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			g.Annotations[kv[i]] = kv[i+1]
		}
	}
}

// both applies several changes in order.
func both(changes ...func(g *VirtualMachineGroup)) func(g *VirtualMachineGroup) {
	return func(g *VirtualMachineGroup) {
		for _, c := range changes {
			c(g)
		}
	}
}

func groupBootOrder(steps ...[]GroupMember) func(g *VirtualMachineGroup) {
	return func(g *VirtualMachineGroup) {
		for _, s := range steps {
			g.Spec.BootOrder = append(g.Spec.BootOrder, VirtualMachineGroupBootOrderGroup{Members: s})
		}
	}
}

func admitGroup(t *testing.T, g, old *VirtualMachineGroup, privileged bool) (int, []string) {
	t.Helper()
	env := GroupEnv{Privileged: privileged, Now: func() time.Time { return groupNow }}
	code, errs := admitKind(t, "VirtualMachineGroup", g, old,
		func(g, old *VirtualMachineGroup) *field.Error { return DefaultVirtualMachineGroup(g, old, env) },
		func(g, old *VirtualMachineGroup) field.ErrorList { return ValidateVirtualMachineGroup(g, old, env) })
	return code, ruleErrors(errs)
}

func TestVirtualMachineGroupRules(t *testing.T) {
	const lastUpdated = "metadata.annotations[" + AnnotationLastUpdatedPowerStateTime + "]"
	vm := func(name string) GroupMember { return GroupMember{Kind: GroupMemberKindVirtualMachine, Name: name} }
	vmg := func(name string) GroupMember {
		return GroupMember{Kind: GroupMemberKindVirtualMachineGroup, Name: name}
	}
	on := testGroup(both(groupPower(PowerStateOn), groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupEarlier)))
	tests := []struct {
		name       string
		obj, old   *VirtualMachineGroup // old nil: create
		privileged bool
		wantCode   int
		wantErrs   []string
	}{
		{"9.3-1 nextForcePowerStateSyncTime now", testGroup(func(g *VirtualMachineGroup) { g.Spec.NextForcePowerStateSyncTime = "Now" }),
			nil, false, 200, nil},
		{"9.3-1 nextForcePowerStateSyncTime other value", testGroup(func(g *VirtualMachineGroup) { g.Spec.NextForcePowerStateSyncTime = "tomorrow" }),
			nil, false, 403, []string{`FieldValueInvalid spec.nextForcePowerStateSyncTime "tomorrow"`}},
		{"9.3-1 nextForcePowerStateSyncTime changed to a time", testGroup(func(g *VirtualMachineGroup) { g.Spec.NextForcePowerStateSyncTime = groupNowStr }),
			testGroup(func(g *VirtualMachineGroup) { g.Spec.NextForcePowerStateSyncTime = groupEarlier }), true, 403,
			[]string{`FieldValueInvalid spec.nextForcePowerStateSyncTime "` + groupNowStr + `"`}},
		{"VMG-1 non-privileged power state change", testGroup(both(groupPower(PowerStateOff), groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupEarlier))),
			on, false, 200, nil},
		{"VMG-1 non-privileged annotation change", testGroup(both(groupPower(PowerStateOn), groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupNowStr))),
			on, false, 422, []string{"FieldValueForbidden " + lastUpdated}},
		{"VMG-1 non-privileged annotation on create", testGroup(groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupNowStr)),
			nil, false, 422, []string{"FieldValueForbidden " + lastUpdated}},
		{"VMG-1 privileged annotation change", testGroup(both(groupPower(PowerStateOn), groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupNowStr))),
			on, true, 200, nil},
		{"VMG-2 not RFC3339Nano", testGroup(both(groupPower(PowerStateOn), groupAnnotations(AnnotationLastUpdatedPowerStateTime, "yesterday"))),
			on, true, 422, []string{"FieldValueInvalid " + lastUpdated + ` "yesterday"`}},
		{"VMG-1 VMG-2 non-privileged bad annotation", testGroup(both(groupPower(PowerStateOn), groupAnnotations(AnnotationLastUpdatedPowerStateTime, "yesterday"))),
			on, false, 422, []string{"FieldValueForbidden " + lastUpdated, "FieldValueInvalid " + lastUpdated + ` "yesterday"`}},
		{"VMG-3 power state changed", testGroup(groupPower(PowerStateSuspended)), on, false, 200, nil},
		{"VMG-3 power state cleared", testGroup(groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupEarlier)), on, false, 422,
			[]string{"FieldValueForbidden spec.powerState"}},
		{"VMG-3 power state never set", testGroup(nil), testGroup(nil), false, 200, nil},
		{"VMG-4 distinct members", testGroup(groupBootOrder([]GroupMember{vm("a"), vmg("a")}, []GroupMember{vm("b")})), nil, false, 200, nil},
		{"VMG-4 duplicate member", testGroup(groupBootOrder([]GroupMember{vm("a"), vm("b")}, []GroupMember{vmg("c"), vm("a")})), nil, false, 422,
			[]string{`FieldValueDuplicate spec.bootOrder[1].members[1] "VirtualMachine/a"`}},
		{"VMG-4 duplicate member within one step (schema)", testGroup(groupBootOrder([]GroupMember{vm("a"), {Name: "a"}})), nil, false, 422,
			[]string{`FieldValueDuplicate spec.bootOrder[0].members[1] "VirtualMachine/a"`}},
		{"VMG-5 virtual machine named like the group", testGroup(groupBootOrder([]GroupMember{vm("web")})), nil, false, 200, nil},
		{"VMG-5 group is its own member", testGroup(groupBootOrder([]GroupMember{vm("a")}, []GroupMember{vmg("web")})), nil, false, 422,
			[]string{`FieldValueInvalid spec.bootOrder[1].members[0] "VirtualMachineGroup/web"`}},
		{"VMG-6 parent group", testGroup(func(g *VirtualMachineGroup) { g.Spec.GroupName = "all" }), nil, false, 200, nil},
		{"VMG-6 group is its own parent", testGroup(func(g *VirtualMachineGroup) { g.Spec.GroupName = "web" }), nil, false, 422,
			[]string{`FieldValueInvalid spec.groupName "web"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, errs := admitGroup(t, tt.obj, tt.old, tt.privileged)
			if code != tt.wantCode {
				t.Errorf("code = %d, want %d", code, tt.wantCode)
			}
			if diff := cmp.Diff(tt.wantErrs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// The defaulted values: what a successful admission stores.
func TestVirtualMachineGroupDefaults(t *testing.T) {
	const apply = AnnotationApplyPowerStateTime
	sync := func(v string) func(g *VirtualMachineGroup) {
		return func(g *VirtualMachineGroup) { g.Spec.NextForcePowerStateSyncTime = v }
	}
	parent := func(name string) func(g *VirtualMachineGroup) {
		return func(g *VirtualMachineGroup) {
			g.Spec.GroupName = name
			g.OwnerReferences = []metav1.OwnerReference{
				{APIVersion: "vmoperator.vmware.com/v1alpha5", Kind: "VirtualMachineGroup", Name: "old-parent", UID: "1"},
				{APIVersion: "example.com/v1", Kind: "Thing", Name: "old-parent", UID: "2"},
			}
		}
	}
	stored := testGroup(both(groupPower(PowerStateOn), sync(groupEarlier),
		groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupEarlier, apply, groupEarlier)))
	tests := []struct {
		name                string
		obj, old            *VirtualMachineGroup
		wantSync            string
		wantAnnotations     map[string]string
		wantOwnerReferences []string // names and kinds
	}{
		{"9.3-1 now becomes the instant and forces a sync",
			testGroup(both(groupPower(PowerStateOn), sync("NOW"), groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupEarlier, apply, groupEarlier))),
			stored, groupNowStr, map[string]string{AnnotationLastUpdatedPowerStateTime: groupNowStr}, nil},
		{"9.3-1 empty keeps the stored value",
			testGroup(both(groupPower(PowerStateOn), groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupEarlier, apply, groupEarlier))),
			stored, groupEarlier, map[string]string{AnnotationLastUpdatedPowerStateTime: groupEarlier, apply: groupEarlier}, nil},
		{"9.3-2 power state on create stamps the annotation", testGroup(groupPower(PowerStateOn)), nil,
			"", map[string]string{AnnotationLastUpdatedPowerStateTime: groupNowStr}, nil},
		{"9.3-2 no power state on create stamps nothing", testGroup(nil), nil, "", nil, nil},
		{"9.3-2 power state change drops the pending apply",
			testGroup(both(groupPower(PowerStateOff), sync(groupEarlier), groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupEarlier, apply, groupEarlier))),
			stored, groupEarlier, map[string]string{AnnotationLastUpdatedPowerStateTime: groupNowStr}, nil},
		{"9.3-2 power state change by the parent keeps its apply time",
			testGroup(both(groupPower(PowerStateOff), sync(groupEarlier), groupAnnotations(AnnotationLastUpdatedPowerStateTime, groupEarlier, apply, groupNowStr))),
			stored, groupEarlier, map[string]string{AnnotationLastUpdatedPowerStateTime: groupNowStr, apply: groupNowStr}, nil},
		{"9.3-3 new parent drops the old parent's ownerReference",
			testGroup(parent("new-parent")), testGroup(parent("old-parent")), "", nil, []string{"Thing/old-parent"}},
		{"9.3-3 same parent keeps the ownerReference",
			testGroup(parent("old-parent")), testGroup(parent("old-parent")), "", nil,
			[]string{"VirtualMachineGroup/old-parent", "Thing/old-parent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, errs := admitGroup(t, tt.obj, tt.old, false); code != 200 {
				t.Fatalf("code = %d %v, want 200", code, errs)
			}
			if got := tt.obj.Spec.NextForcePowerStateSyncTime; got != tt.wantSync {
				t.Errorf("nextForcePowerStateSyncTime = %q, want %q", got, tt.wantSync)
			}
			if diff := cmp.Diff(tt.wantAnnotations, tt.obj.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			var refs []string
			for _, r := range tt.obj.OwnerReferences {
				refs = append(refs, r.Kind+"/"+r.Name)
			}
			if diff := cmp.Diff(tt.wantOwnerReferences, refs); diff != "" {
				t.Errorf("ownerReferences (-want +got):\n%s", diff)
			}
		})
	}
}
