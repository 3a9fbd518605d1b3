package main

import (
	"slices"
	"strings"
	"testing"
)

// TestKubectlAuth: kubectl auth whoami and kubectl auth can-i (also --list) answer from
// the gateway's own rules, for the privileged admin and for the ordinary user of default
// and my-namespace.
func TestKubectlAuth(t *testing.T) {
	s := startStack(t)
	for ctx, want := range map[string]string{"admin": "admin", "user": "user"} {
		if got := s.kubectl("--context", ctx, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); got != want {
			t.Errorf("kubectl --context %s auth whoami: %q, want %q", ctx, got, want)
		}
	}
	if got := s.kubectl("--context", "admin", "auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}"); !strings.Contains(got, "system:masters") {
		t.Errorf("admin's groups %q, want system:masters", got)
	}

	tests := []struct {
		ctx  string
		args []string
		want bool
	}{
		{"admin", []string{"create", "vm", "-n", "my-namespace"}, true},
		{"admin", []string{"create", "vmclass", "-n", "kube-system"}, true},
		{"admin", []string{"list", "vm", "-A"}, true},
		{"admin", []string{"get", "/metrics"}, true},
		{"admin", []string{"patch", "vm", "--subresource=status", "-n", "my-namespace"}, false}, // only services write status
		{"admin", []string{"deletecollection", "vm", "-n", "my-namespace"}, false},              // not served
		{"admin", []string{"*", "*"}, true},

		{"user", []string{"create", "vm", "-n", "my-namespace"}, true},
		{"user", []string{"delete", "vm/my-vm", "-n", "default"}, true},
		{"user", []string{"update", "vm", "--subresource=stop", "-n", "my-namespace"}, true},
		{"user", []string{"create", "vm", "-n", "kube-system"}, false}, // not one of user's namespaces
		{"user", []string{"list", "vm", "-A"}, false},                  // cluster scope
		{"user", []string{"get", "vmclass", "-n", "my-namespace"}, true},
		{"user", []string{"create", "vmclass", "-n", "my-namespace"}, false}, // privileged writes only
		{"user", []string{"get", "cvmi"}, true},                              // cluster-scoped kinds are readable
		{"user", []string{"delete", "cvmi/x"}, false},
		{"user", []string{"get", "/version"}, true},
		{"user", []string{"get", "/metrics"}, false},
		{"user", []string{"*", "*", "-n", "my-namespace"}, false},
	}
	for _, tt := range tests {
		args := append([]string{"--context", tt.ctx, "auth", "can-i"}, tt.args...)
		out, err := s.kubectlErr(args...)
		lines := strings.Split(strings.TrimSpace(out), "\n") // after kubectl's own warnings
		got := lines[len(lines)-1]
		if (tt.want && (err != nil || got != "yes")) || (!tt.want && (err == nil || !strings.HasPrefix(got, "no"))) {
			t.Errorf("kubectl %s: %q (%v), want %v", strings.Join(args, " "), got, err, tt.want)
		}
	}

	// --list agrees with can-i: the user may do everything to VMs in its namespace, only
	// read classes, and nothing to VMs elsewhere.
	own := s.kubectl("--context", "user", "auth", "can-i", "--list", "-n", "my-namespace")
	if !hasRule(own, "virtualmachines.vmoperator.vmware.com", "create") || hasRule(own, "virtualmachineclasses.vmoperator.vmware.com", "create") ||
		!hasRule(own, "virtualmachineclasses.vmoperator.vmware.com", "get") {
		t.Errorf("user's rules in my-namespace:\n%s", own)
	}
	other := s.kubectl("--context", "user", "auth", "can-i", "--list", "-n", "kube-system")
	if hasRule(other, "virtualmachines.vmoperator.vmware.com", "get") || !hasRule(other, "clustervirtualmachineimages.vmoperator.vmware.com", "get") {
		t.Errorf("user's rules in kube-system:\n%s", other)
	}
}

// hasRule reports whether kubectl auth can-i --list output grants verb on resource.
func hasRule(list, resource, verb string) bool {
	for _, line := range strings.Split(list, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != resource {
			continue
		}
		verbs := strings.Fields(strings.Trim(line[strings.LastIndex(line, "["):], "[] "))
		if slices.Contains(verbs, verb) {
			return true
		}
	}
	return false
}
