package apply

import (
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
