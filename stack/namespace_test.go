package main

import (
	"strings"
	"testing"

	"github.com/vmop/vmop/pkg/vcenter"
)

// kubectl delete namespace deletes what the namespace holds, as in Kubernetes: its VM is
// destroyed in vCenter and its Secret goes, then the namespace, which kubectl waits for.
func TestDeleteNamespaceDeletesItsVMs(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	const ns = "my-namespace-1"
	if out, err := tp.kubectlCtx(t.Context(), []byte(vmNamed("ns-vm", "")), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	tp.kubectl("create", "secret", "generic", "ns-secret", "-n", ns, "--from-literal=k=v")
	tp.eventually("ns-vm PoweredOn", func() bool {
		out, _ := tp.kubectlErr("get", "vm", "ns-vm", "-n", ns, "-o", "jsonpath={.status.powerState}")
		return out == "PoweredOn"
	})
	uuid := tp.kubectl("get", "vm", "ns-vm", "-n", ns, "-o", "jsonpath={.spec.instanceUUID}")

	tp.kubectl("delete", "namespace", ns, "--timeout=90s")
	if _, err := vcenter.FindVM(t.Context(), vc, uuid); err == nil {
		t.Errorf("ns-vm (%s) still in vCenter after its namespace was deleted", uuid)
	}
	for _, what := range []string{"namespace/" + ns, "vm/ns-vm", "secret/ns-secret"} {
		args := []string{"get", what}
		if !strings.HasPrefix(what, "namespace/") {
			args = append(args, "-n", ns)
		}
		if out, err := tp.kubectlErr(args...); err == nil || !strings.Contains(out, "NotFound") {
			t.Errorf("kubectl get %s after the namespace was deleted: %v %s, want NotFound", what, err, out)
		}
	}
}
