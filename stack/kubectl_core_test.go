package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubectlCoreKinds walks issue #12's acceptance for the built-in kinds that kubectl's
// typed commands send in Kubernetes protobuf: create namespace, create secret (from a
// literal and from a file) and create configmap work, the values read back, the new
// namespace is Active, and it survives a restart of the stack on the same data.
func TestKubectlCoreKinds(t *testing.T) {
	s := startStack(t)
	s.kubectl("create", "namespace", "team-a")
	s.kubectl("create", "secret", "generic", "s", "--from-literal=k=v", "-n", "team-a")
	file := filepath.Join(t.TempDir(), "user-data")
	if err := os.WriteFile(file, []byte("#cloud-config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.kubectl("create", "secret", "generic", "s2", "--from-file="+file, "-n", "team-a")
	s.kubectl("create", "configmap", "c", "--from-literal=k=v", "-n", "team-a")

	if v, err := base64.StdEncoding.DecodeString(s.kubectl("get", "secret", "s", "-n", "team-a", "-o", "jsonpath={.data.k}")); err != nil || string(v) != "v" {
		t.Errorf("secret s data.k = %q (%v), want v", v, err)
	}
	if v, err := base64.StdEncoding.DecodeString(s.kubectl("get", "secret", "s2", "-n", "team-a", "-o", "jsonpath={.data.user-data}")); err != nil || string(v) != "#cloud-config\n" {
		t.Errorf("secret s2 data.user-data = %q (%v), want the file", v, err)
	}
	if out := s.kubectl("get", "configmap", "c", "-n", "team-a", "-o", "jsonpath={.data.k}"); out != "v" {
		t.Errorf("configmap c data.k = %q, want v", out)
	}
	if out := s.kubectl("get", "ns", "team-a", "-o", "jsonpath={.status.phase}"); out != "Active" {
		t.Errorf("namespace team-a phase = %q, want Active", out)
	}
	if out, err := s.kubectlErr("create", "namespace", "team-a"); err == nil || !strings.Contains(out, "AlreadyExists") && !strings.Contains(out, "already exists") {
		t.Errorf("second create namespace team-a: %v\n%s", err, out)
	}

	s.stop()
	s = startStackWith(t, map[string]string{"VMOP_DATA": s.data})
	if out := s.kubectl("get", "ns", "team-a", "-o", "jsonpath={.status.phase}"); out != "Active" {
		t.Errorf("after a restart, namespace team-a phase = %q, want Active", out)
	}
	if v, err := base64.StdEncoding.DecodeString(s.kubectl("get", "secret", "s", "-n", "team-a", "-o", "jsonpath={.data.k}")); err != nil || string(v) != "v" {
		t.Errorf("after a restart, secret s data.k = %q (%v), want v", v, err)
	}
}
