package placement

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/vmware/govmomi/vapi/tags"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// policyObject is a ComputePolicy or TagPolicy of the test namespace.
func policyObject(kind, name string, generation int64, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": policyAPIVersion, "kind": kind, "spec": spec,
		"metadata": map[string]any{"name": name, "namespace": testNamespace, "uid": "uid-" + name,
			"generation": generation, "creationTimestamp": "2026-01-01T00:00:00Z"}}
}

func (h *harness) putPolicy(kind, name string, generation int64, spec map[string]any) {
	h.t.Helper()
	plural := pluralComputePolicies
	if kind == "TagPolicy" {
		plural = pluralTagPolicies
	}
	h.append(events.Ref{Plural: plural, Namespace: testNamespace, Name: name}, policyObject(kind, name, generation, spec))
}

// vmTags lists the tags attached to the VM of uid in vcsim.
func (h *harness) vmTags(m *tags.Manager, uid string) []string {
	h.t.Helper()
	vms := h.vmsOf(uid)
	if len(vms) != 1 {
		h.t.Fatalf("%d VMs of uid %s, want 1", len(vms), uid)
	}
	ids, err := m.ListAttachedTags(h.ctx, vms[0].Self)
	if err != nil {
		h.t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

func (h *harness) tagManager() *tags.Manager {
	h.t.Helper()
	rc, err := vcenter.LoginREST(h.ctx, h.vc, seeded.sim.URL.User)
	if err != nil {
		h.t.Fatal(err)
	}
	return tags.NewManager(rc)
}

func newTagID() string { return tagURNPrefix + uuid.NewString() + tagURNSuffix }

func policyRef(name string) map[string]any {
	return map[string]any{"apiVersion": policyAPIVersion, "kind": "ComputePolicy", "name": name}
}

func applied(names map[string]int64) []model.PolicyStatus {
	var out []model.PolicyStatus
	for _, n := range slices.Sorted(maps.Keys(names)) {
		out = append(out, model.PolicyStatus{Generation: names[n],
			LocalObjectRef: model.LocalObjectRef{APIVersion: policyAPIVersion, Kind: "ComputePolicy", Name: n}})
	}
	return out
}

// A VM naming the seed's Optional policy and labelled like a Mandatory policy's match gets
// both policies' tags (one created in vCenter under the TagPolicy's UUID), the namespace's
// default policy's, and not an Optional policy's it does not name; status.policies lists
// them with their generations. Dropping spec.policies detaches that policy's tag; a change of
// a policy reaches the VM.
func TestPoliciesTagTheVM(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	for _, name := range []string{inventory.ComputePolicyName, inventory.DefaultComputePolicy} {
		h.seedObject("TagPolicy", testNamespace, name, "")
		h.seedObject("ComputePolicy", testNamespace, name, "")
	}
	webTag, optTag, newWebTag := newTagID(), newTagID(), newTagID()
	h.putPolicy("TagPolicy", "web-tags", 1, map[string]any{"tags": []any{webTag}})
	h.putPolicy("ComputePolicy", "web-policy", 1, map[string]any{"enforcementMode": "Mandatory", "tags": []any{"web-tags"},
		"match": map[string]any{"workload": map[string]any{"labels": []any{
			map[string]any{"key": "tier", "operator": "In", "values": []any{"web"}}}}}})
	h.putPolicy("TagPolicy", "opt-tags", 1, map[string]any{"tags": []any{optTag}})
	h.putPolicy("ComputePolicy", "opt-policy", 1, map[string]any{"enforcementMode": "Optional", "tags": []any{"opt-tags"}})
	h.runService()
	m := h.tagManager()
	seededTag := func(name string) string {
		tag, err := m.GetTagForCategory(h.ctx, name, inventory.PolicyTagCategory)
		if err != nil {
			t.Fatal(err)
		}
		return tag.ID
	}
	myTag, defaultTag := seededTag(inventory.ComputePolicyName), seededTag(inventory.DefaultComputePolicy)

	v := newTestVM("policy-vm")
	v.labels = map[string]any{"tier": "web"}
	withPolicies := v.object(1, false)
	withPolicies["spec"].(map[string]any)["policies"] = []any{policyRef(inventory.ComputePolicyName)}
	h.append(v.ref, withPolicies)
	want := applied(map[string]int64{inventory.ComputePolicyName: 1, inventory.DefaultComputePolicy: 1, "web-policy": 1})
	_, st := h.waitSlice(v.ref, "created with its policies", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return created(events.Slice{}, st) && isTrue(st, model.ConditionPoliciesReady)
	})
	if d := cmp.Diff(want, st.Policies); d != "" {
		t.Errorf("status.policies (-want +got):\n%s", d)
	}
	wantTags := slices.Sorted(slices.Values([]string{myTag, defaultTag, webTag}))
	if got := h.vmTags(m, v.uid); !slices.Equal(got, wantTags) {
		t.Errorf("tags of the VM %v, want %v (not the unnamed Optional policy's %s)", got, wantTags, optTag)
	}
	if tag, err := m.GetTag(h.ctx, webTag); err != nil || tag.Name != webTag {
		t.Errorf("tag of TagPolicy web-tags in vCenter: %+v, %v; want it created under its UUID", tag, err)
	}

	h.append(v.ref, v.object(2, false)) // spec.policies dropped
	h.waitSlice(v.ref, "spec.policies dropped", func(s events.Slice, st model.VirtualMachineStatus) bool {
		return s.Generation == 2 && len(st.Policies) == 2
	})
	wantTags = slices.Sorted(slices.Values([]string{defaultTag, webTag}))
	if got := h.vmTags(m, v.uid); !slices.Equal(got, wantTags) {
		t.Errorf("tags after dropping spec.policies %v, want %v", got, wantTags)
	}

	h.putPolicy("TagPolicy", "web-tags", 2, map[string]any{"tags": []any{newWebTag}})
	h.putPolicy("ComputePolicy", "web-policy", 2, map[string]any{"enforcementMode": "Mandatory", "tags": []any{"web-tags"},
		"match": map[string]any{"workload": map[string]any{"labels": []any{
			map[string]any{"key": "tier", "operator": "In", "values": []any{"web"}}}}}})
	_, st = h.waitSlice(v.ref, "policy change applied", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return slices.ContainsFunc(st.Policies, func(p model.PolicyStatus) bool { return p.Name == "web-policy" && p.Generation == 2 })
	})
	wantTags = slices.Sorted(slices.Values([]string{defaultTag, newWebTag}))
	deadline := time.Now().Add(waitFor)
	for got := h.vmTags(m, v.uid); !slices.Equal(got, wantTags); got = h.vmTags(m, v.uid) {
		if time.Now().After(deadline) {
			t.Fatalf("tags after the TagPolicy changed %v, want %v", got, wantTags)
		}
		time.Sleep(pollEvery)
	}
}

// A VM naming an Optional policy whose TagPolicy does not exist is told so in
// VirtualMachinePoliciesReady and gets no tag at all, not even the Mandatory policy's:
// no partial state. Once the TagPolicy appears, every tag is attached.
func TestPolicyNamingMissingTagPolicy(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.seedObject("TagPolicy", testNamespace, inventory.DefaultComputePolicy, "")
	h.seedObject("ComputePolicy", testNamespace, inventory.DefaultComputePolicy, "")
	h.putPolicy("ComputePolicy", "broken-policy", 1, map[string]any{"enforcementMode": "Optional", "tags": []any{"no-such-tags"}})
	h.runService()
	m := h.tagManager()

	v := newTestVM("broken-policy-vm")
	obj := v.object(1, false)
	obj["spec"].(map[string]any)["policies"] = []any{policyRef("broken-policy")}
	h.append(v.ref, obj)
	_, st := h.waitSlice(v.ref, "PoliciesReady False", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return created(events.Slice{}, st) && condition(st, model.ConditionPoliciesReady).Status == metav1.ConditionFalse
	})
	c := condition(st, model.ConditionPoliciesReady)
	wantMsg := "ComputePolicy broken-policy names TagPolicy no-such-tags, which does not exist in namespace " + testNamespace
	if c.Reason != model.ReasonNotFound || c.Message != wantMsg {
		t.Errorf("VirtualMachinePoliciesReady %s %q, want NotFound %q", c.Reason, c.Message, wantMsg)
	}
	if len(st.Policies) != 0 {
		t.Errorf("status.policies %v, want none", st.Policies)
	}
	if got := h.vmTags(m, v.uid); len(got) != 0 {
		t.Errorf("tags of the VM %v, want none", got)
	}

	tag := newTagID()
	h.putPolicy("TagPolicy", "no-such-tags", 1, map[string]any{"tags": []any{tag}})
	_, st = h.waitSlice(v.ref, "PoliciesReady True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return isTrue(st, model.ConditionPoliciesReady)
	})
	if len(st.Policies) != 2 {
		t.Errorf("status.policies %v, want broken-policy and the default policy", st.Policies)
	}
	if got := h.vmTags(m, v.uid); len(got) != 2 || !slices.Contains(got, tag) {
		t.Errorf("tags of the VM %v, want 2 with %s", got, tag)
	}
}

func TestTagURN(t *testing.T) {
	u := "0b4e3a3c-4f07-4a51-9a4e-6a0d1d8a0c11"
	for in, want := range map[string]string{
		u:                                    tagURNPrefix + u + tagURNSuffix,
		tagURNPrefix + u + tagURNSuffix:      tagURNPrefix + u + tagURNSuffix,
		"prod":                               "",
		tagURNPrefix + "prod" + tagURNSuffix: "",
		"x" + u:                              "",
	} {
		if got, _ := tagURN(in); got != want {
			t.Errorf("tagURN(%q) = %q, want %q", in, got, want)
		}
	}
}

// Placement acts on the difference between the tags a VM should have and those vCenter
// shows, whatever happened in between (a crash, someone else's change): a policy tag
// detached behind its back is attached again, a tag of the policy category no applied policy
// names is detached, and a tag of another category is left alone.
func TestPolicyTagsFollowTheDifference(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	h.seedObject("TagPolicy", testNamespace, inventory.DefaultComputePolicy, "")
	h.seedObject("ComputePolicy", testNamespace, inventory.DefaultComputePolicy, "")
	h.runService()
	m := h.tagManager()

	v := newTestVM("tag-diff-vm")
	h.putVM(v, false)
	h.waitSlice(v.ref, "created with its policies", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return created(events.Slice{}, st) && isTrue(st, model.ConditionPoliciesReady)
	})
	defaultTag, err := m.GetTagForCategory(h.ctx, inventory.DefaultComputePolicy, inventory.PolicyTagCategory)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.vmTags(m, v.uid); !slices.Equal(got, []string{defaultTag.ID}) {
		t.Fatalf("tags of the new VM %v, want only %s", got, defaultTag.ID)
	}

	policyCat, err := m.GetCategory(h.ctx, inventory.PolicyTagCategory)
	if err != nil {
		t.Fatal(err)
	}
	stray, err := m.CreateTag(h.ctx, &tags.Tag{Name: "stray-" + v.uid, CategoryID: policyCat.ID})
	if err != nil {
		t.Fatal(err)
	}
	otherCat, err := m.CreateCategory(h.ctx, &tags.Category{Name: "other-" + v.uid, Cardinality: "MULTIPLE",
		AssociableTypes: []string{"VirtualMachine"}})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := m.CreateTag(h.ctx, &tags.Tag{Name: "foreign", CategoryID: otherCat})
	if err != nil {
		t.Fatal(err)
	}
	vm := h.vmsOf(v.uid)[0].Self
	if err := m.DetachTag(h.ctx, defaultTag.ID, vm); err != nil {
		t.Fatal(err)
	}
	if err := m.AttachMultipleTagsToObject(h.ctx, []string{stray, foreign}, vm); err != nil {
		t.Fatal(err)
	}

	v.annotations = map[string]any{"test/poke": "1"} // a change of the record brings a reconcile
	h.putVM(v, false)
	want := slices.Sorted(slices.Values([]string{defaultTag.ID, foreign}))
	deadline := time.Now().Add(waitFor)
	for got := h.vmTags(m, v.uid); !slices.Equal(got, want); got = h.vmTags(m, v.uid) {
		if time.Now().After(deadline) {
			t.Fatalf("tags of the VM %v, want %v: the policy's back, the stray policy tag gone, the foreign one kept", got, want)
		}
		time.Sleep(pollEvery)
	}
}
