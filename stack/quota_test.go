package main

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// TestKubectlStorageQuota: with 60Gi of quota free, the multi-disk image's VM (disks that
// can grow to 20Gi and 50Gi) is refused with kube-apiserver's reason and not stored; a
// Photon VM (20Gi) is accepted, and once the storage service has registered its image disk
// as a claim, its status.storage.total and the claim's request are the use `kubectl get
// resourcequota` shows.
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
	// Once storage has registered the image disk as a claim (the schema upgrade), the VM is
	// charged its status.storage.total (its other files) and the claim its request.
	var total, used, seen string
	s.eventually("the VM's storage reported and charged", func() bool {
		registered := s.must(t, "admin", "", "get", "vm", "quota-small", "-o",
			`jsonpath={.status.conditions[?(@.type=="VirtualMachineUnmanagedVolumesRegistered")].status}`)
		total = strings.TrimSpace(s.must(t, "admin", "", "get", "vm", "quota-small", "-o", "jsonpath={.status.storage.total}"))
		claims := strings.Fields(s.must(t, "admin", "", "get", "pvc", "-l", "vm.vmoperator.vmware.com/name=quota-small", "-o",
			"jsonpath={.items[*].spec.resources.requests.storage}"))
		used = s.must(t, "admin", "", "get", "resourcequota", "my-quota", "-o", `jsonpath={.status.used.requests\.storage}`)
		if now := fmt.Sprintf("registered %q, total %q, claims %q, used %q", registered, total, claims, used); now != seen {
			t.Log(now) // what a timeout leaves to read
			seen = now
		}
		if registered != "True" || total == "" || len(claims) != 1 {
			return false
		}
		want := resource.MustParse(total)
		want.Add(resource.MustParse(claims[0]))
		got, err := resource.ParseQuantity(used)
		return err == nil && got.Cmp(want) == 0
	})
	if total == "0" || strings.HasSuffix(total, "Gi") {
		t.Errorf("status.storage.total = %s: the VM's other files (configuration, logs) are not counted, or its claim is", total)
	}
	out = s.must(t, "admin", "", "get", "resourcequota")
	t.Logf("kubectl get resourcequota:\n%s", out)
	if fields := strings.Fields(out); len(fields) < 8 || strings.Join(fields[:4], " ") != "NAME AGE REQUEST LIMIT" ||
		strings.Join(fields[6:8], " ") != "requests.storage: "+used+"/60Gi" {
		t.Errorf("kubectl get resourcequota:\n%s\nwant my-quota with REQUEST requests.storage: %s/60Gi", out, used)
	}
}
