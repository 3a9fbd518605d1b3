package apply

import (
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

var (
	hub    = schema.GroupVersion{Group: "vmoperator.vmware.com", Version: "v1alpha5"}
	vmKind = hub.WithKind("VirtualMachine")
)

func vm(t *testing.T, y string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(y), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

const vmHead = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata: {name: my-vm, namespace: ns}
`

func managers(obj map[string]any) []string {
	var out []string
	for _, e := range obj["metadata"].(map[string]any)["managedFields"].([]any) {
		m := e.(map[string]any)
		out = append(out, m["manager"].(string)+"/"+m["operation"].(string))
	}
	return out
}

// Two managers applying the same field conflict; force moves the field to the second.
func TestApplyConflictAndForce(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	empty := vm(t, vmHead)
	first, err := m.Apply(vmKind, hub, empty, vm(t, vmHead+"spec: {className: small, powerState: PoweredOn}\n"), "kubectl", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(first); len(got) != 1 || got[0] != "kubectl/Apply" {
		t.Fatalf("managers after the first apply: %v", got)
	}
	other := vm(t, vmHead+"spec: {powerState: PoweredOff}\n")
	_, err = m.Apply(vmKind, hub, first, other, "other", false)
	if !apierrors.IsConflict(err) {
		t.Fatalf("second manager's apply: %v, want a conflict", err)
	}
	st := err.(apierrors.APIStatus).Status()
	if st.Code != http.StatusConflict || !strings.Contains(st.Message, `conflict with "kubectl"`) ||
		len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != ".spec.powerState" {
		t.Errorf("conflict: %+v", st)
	}
	forced, err := m.Apply(vmKind, hub, first, vm(t, vmHead+"spec: {powerState: PoweredOff}\n"), "other", true)
	if err != nil {
		t.Fatal(err)
	}
	spec := forced["spec"].(map[string]any)
	if spec["powerState"] != "PoweredOff" || spec["className"] != "small" {
		t.Errorf("forced spec %v, want powerState taken and className kept", spec)
	}
	if got := managers(forced); len(got) != 2 {
		t.Errorf("managers after the forced apply: %v", got)
	}
}

// An update records its manager beside the appliers, and a later apply of a field the
// update changed conflicts with it.
func TestUpdateRecordsManager(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	created, err := m.Update(vmKind, hub, nil, vm(t, vmHead+"spec: {className: small}\n"), "kubectl-create")
	if err != nil {
		t.Fatal(err)
	}
	created["metadata"].(map[string]any)["uid"] = "u1"
	edited := vm(t, vmHead+"spec: {className: large}\n")
	edited["metadata"].(map[string]any)["managedFields"] = created["metadata"].(map[string]any)["managedFields"]
	updated, err := m.Update(vmKind, hub, created, edited, "kubectl-edit")
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(updated); len(got) != 2 || got[1] != "kubectl-edit/Update" {
		t.Errorf("managers after the edit: %v, want the creator and the editor", got)
	}
	_, err = m.Apply(vmKind, hub, updated, vm(t, vmHead+"spec: {className: small}\n"), "gitops", false)
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "kubectl-edit" using vmoperator.vmware.com/v1alpha5: .spec.className`) {
		t.Errorf("apply over an edited field: %v, want a conflict with kubectl-edit", err)
	}
}

// A field applied through v1alpha4 stays its manager's when another manager applies
// through v1alpha5: the managed sets are converted between versions.
func TestApplyAcrossVersions(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	v1alpha4 := schema.GroupVersion{Group: hub.Group, Version: "v1alpha4"}.WithKind("VirtualMachine")
	old := strings.Replace(vmHead, "v1alpha5", "v1alpha4", 1)
	first, err := m.Apply(v1alpha4, hub, vm(t, old), vm(t, old+"spec: {className: small, imageName: img}\n"), "kubectl", false)
	if err != nil {
		t.Fatal(err)
	}
	if first["apiVersion"] != "vmoperator.vmware.com/v1alpha4" {
		t.Errorf("answered in %v, want the request's v1alpha4", first["apiVersion"])
	}
	// The live object as the gateway stores it: in the hub version.
	live, err := versions{}.ConvertToVersion(mustUnstructured(t, first), hub)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Apply(vmKind, hub, live.(*unstructured.Unstructured).Object,
		vm(t, vmHead+"spec: {className: large}\n"), "other", false)
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "kubectl": .spec.className`) {
		t.Errorf("v1alpha5 apply over a v1alpha4 manager's field: %v, want a conflict", err)
	}
}

func mustUnstructured(t *testing.T, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	u, err := unstructuredOf(obj)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
