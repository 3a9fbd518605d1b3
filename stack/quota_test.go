package main

import (
	"strings"
	"testing"
)

// TestKubectlStorageQuota: with 60Gi of quota free, the multi-disk image's VM (disks that
// can grow to 20Gi and 50Gi) is refused with kube-apiserver's reason and not stored; a
// Photon VM (20Gi) is accepted, and once the storage service reports its
// status.storage.total, that is the use `kubectl get resourcequota` shows.
func TestKubectlStorageQuota(t *testing.T) {
	s := startStack(t)
	s.must(t, "admin", `apiVersion: v1
kind: ResourceQuota
metadata:
  name: my-quota
  namespace: my-namespace
spec:
  hard:
    requests.storage: 60Gi
`, "apply", "-f", "-")

	out, err := s.as("user", strings.Replace(admissionVM("quota-big", "", ""), "vmi-0a0044d7c690bcbea", "multi-disk-image", 1), "apply", "-f", "-")
	want := `virtualmachines.vmoperator.vmware.com "quota-big" is forbidden: exceeded quota: my-quota, ` +
		`requested: requests.storage=70Gi, used: requests.storage=0, limited: requests.storage=60Gi`
	if err == nil || !strings.Contains(out, "Error from server (Forbidden)") || !strings.Contains(out, want) {
		t.Fatalf("the 70Gi VM: %v\n%s\nwant Forbidden: %s", err, out, want)
	}
	if out, err := s.as("admin", "", "get", "vm", "quota-big"); err == nil {
		t.Errorf("the refused VM exists:\n%s", out)
	}

	s.must(t, "user", admissionVM("quota-small", "", ""), "apply", "-f", "-")
	var total string
	s.eventually("the VM's storage reported and charged", func() bool {
		total = strings.TrimSpace(s.must(t, "admin", "", "get", "vm", "quota-small", "-o", "jsonpath={.status.storage.total}"))
		used := s.must(t, "admin", "", "get", "resourcequota", "my-quota", "-o", `jsonpath={.status.used.requests\.storage}`)
		return total != "" && used == total
	})
	if total == "20Gi" {
		t.Errorf("status.storage.total = %s: the VM's other files (configuration, logs) are not counted", total)
	}
	out = s.must(t, "admin", "", "get", "resourcequota")
	t.Logf("kubectl get resourcequota:\n%s", out)
	if fields := strings.Fields(out); len(fields) < 8 || strings.Join(fields[:4], " ") != "NAME AGE REQUEST LIMIT" ||
		strings.Join(fields[6:8], " ") != "requests.storage: "+total+"/60Gi" {
		t.Errorf("kubectl get resourcequota:\n%s\nwant my-quota with REQUEST requests.storage: %s/60Gi", out, total)
	}
}
