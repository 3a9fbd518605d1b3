package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestKubectlServerSideApply walks issue #12's acceptance for server-side apply with the
// real kubectl: the seed's vm-example (v1alpha4, verbatim) is created by `kubectl apply
// --server-side`; a second field manager changing the same field gets the conflict;
// --force-conflicts takes it; an unknown field is refused naming it.
func TestKubectlServerSideApply(t *testing.T) {
	s := startStack(t)
	apply := func(doc string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return s.kubectlCtx(ctx, []byte(doc), append([]string{"apply", "--server-side", "-n", "my-namespace", "-f", "-"}, args...)...)
	}
	var out string
	var err error
	s.eventually("vm-example applied (once the gateway knows its image)", func() bool {
		out, err = apply(vmExample)
		return err == nil || !strings.Contains(out, "imageName")
	})
	if err != nil || !strings.Contains(out, "virtualmachine.vmoperator.vmware.com/my-vm serverside-applied") {
		t.Fatalf("kubectl apply --server-side of vm-example: %v\n%s", err, out)
	}
	managers := func() string {
		return s.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "--show-managed-fields",
			"-o", `jsonpath={range .metadata.managedFields[*]}{.manager}/{.operation} {end}`)
	}
	if got := managers(); !strings.Contains(got, "kubectl/Apply") {
		t.Errorf("managers after the apply: %q, want kubectl/Apply", got)
	}

	resized := strings.Replace(vmExample, "my-vm-class", "best-effort-large", 1)
	out, err = apply(resized, "--field-manager=other")
	if err == nil || !strings.Contains(out, `Apply failed with 1 conflict: conflict with "kubectl": .spec.className`) {
		t.Errorf("second manager changing className: %v\n%s\nwant the conflict with kubectl", err, out)
	}
	if got := s.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.spec.className}"); got != "my-vm-class" {
		t.Errorf("after the conflict className = %q, want it unchanged", got)
	}

	out, err = apply(resized, "--field-manager=other", "--force-conflicts")
	if err != nil {
		t.Fatalf("apply --force-conflicts: %v\n%s", err, out)
	}
	if got := s.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.spec.className}"); got != "best-effort-large" {
		t.Errorf("after --force-conflicts className = %q, want best-effort-large", got)
	}
	if got := managers(); !strings.Contains(got, "kubectl/Apply") || !strings.Contains(got, "other/Apply") {
		t.Errorf("managers after the forced apply: %q, want kubectl and other", got)
	}
	// The first manager now conflicts in turn.
	if out, err = apply(vmExample); err == nil || !strings.Contains(out, `conflict with "other"`) {
		t.Errorf("first manager re-applying the old className: %v\n%s", err, out)
	}

	unknown := strings.Replace(vmExample, "spec:\n", "spec:\n  bogusField: 1\n", 1)
	if out, err = apply(unknown); err == nil || !strings.Contains(out, "spec.bogusField") {
		t.Errorf("apply with an unknown field: %v\n%s, want it refused naming spec.bogusField", err, out)
	}
}
