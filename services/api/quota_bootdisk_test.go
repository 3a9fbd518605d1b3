package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A VM's boot disk grown by spec.advanced.bootDiskCapacity charges what it adds to its
// image's first disk: on create, and when raised later (the storage service grows the disk
// to it); with 30Gi free of the quota, an image disk that can grow to 20Gi asked to be 40Gi
// is refused, 25Gi fits, and raising it to 60Gi is refused.
func TestBootDiskCapacityIsCharged(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	create := func(path, token, body string) (int, []byte) {
		t.Helper()
		return g.do("POST", path, token, body, "Content-Type", "application/yaml")
	}
	mustCreate := func(path, token, body string) {
		t.Helper()
		if code, resp := create(path, token, body); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, code, resp)
		}
	}
	mustCreate("/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass)
	mustCreate(images, adminToken, quotaImage("grows-to-20gi", "20Gi", "2Gi"))
	if code, resp := g.do("PUT", images+"/grows-to-20gi/status", serviceToken, quotaImage("grows-to-20gi", "20Gi", "2Gi"),
		"Content-Type", "application/yaml"); code != http.StatusOK {
		t.Fatalf("write image status: %d %s", code, resp)
	}
	mustCreate(quotas, adminToken, myQuota)
	mustCreate(claims, userToken, claim("big-claim", "470Gi"))
	waitQuotaUsed(t, g, "470Gi")

	withBootDisk := func(name, size string) string {
		return quotaVM(name, "grows-to-20gi") + "  advanced:\n    bootDiskCapacity: " + size + "\n"
	}
	if code, resp := create(vms, userToken, withBootDisk("boot-40gi", "40Gi")); code != http.StatusForbidden ||
		!strings.Contains(string(resp), "requested: requests.storage=40Gi") {
		t.Errorf("a 40Gi boot disk with 30Gi free: %d %s, want 403 exceeded quota requesting 40Gi", code, resp)
	}
	mustCreate(vms, userToken, withBootDisk("boot-25gi", "25Gi"))
	waitQuotaUsed(t, g, "495Gi")

	code, resp := g.do("PATCH", vms+"/boot-25gi", userToken, `{"spec":{"advanced":{"bootDiskCapacity":"60Gi"}}}`,
		"Content-Type", "application/merge-patch+json")
	if code != http.StatusForbidden || !strings.Contains(string(resp), "requested: requests.storage=35Gi") {
		t.Errorf("raising the boot disk from 25Gi to 60Gi with 5Gi free: %d %s, want 403 exceeded quota requesting 35Gi", code, resp)
	}
}
