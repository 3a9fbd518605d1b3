package api_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	quotas = "/api/v1/namespaces/my-namespace/resourcequotas"
	claims = "/api/v1/namespaces/my-namespace/persistentvolumeclaims"
)

const myQuota = `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"my-quota"},"spec":{"hard":{"requests.storage":"500Gi"}}}`

// quotaImage is an image whose one disk is diskSize in size and can grow to capacity.
func quotaImage(name, capacity, diskSize string) string {
	return fmt.Sprintf(`apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineImage
metadata:
  name: %[1]s
  namespace: my-namespace
status:
  name: %[1]s
  disks:
  - name: disk-0
    limit: %[2]s
    requested: %[3]s
`, name, capacity, diskSize)
}

func quotaVM(name, image string) string {
	return fmt.Sprintf(`apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: %s
spec:
  className: my-vm-class
  imageName: %s
  storageClass: my-storage-class
`, name, image)
}

func claim(name, size string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: my-storage-class
  resources:
    requests:
      storage: %s
`, name, size)
}

// The seed's Storage Quota: with 50Gi free of a 500Gi quota, a VM whose image disk is 2Gi
// but can grow to 100Gi is refused with kube-apiserver's reason and nothing is stored; a
// VM whose disk can grow to 20Gi is accepted. The quota's status follows the VMs'
// status.storage.total and the claims' requests, and `kubectl get resourcequota` shows it.
func TestStorageQuota(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	create := func(path, token, body string) {
		t.Helper()
		if code, resp := g.do("POST", path, token, body, "Content-Type", "application/yaml"); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, code, resp)
		}
	}
	create("/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass)
	for _, img := range []struct{ name, capacity string }{{"grows-to-100gi", "100Gi"}, {"grows-to-20gi", "20Gi"}} {
		create(images, adminToken, quotaImage(img.name, img.capacity, "2Gi"))
		if code, resp := g.do("PUT", images+"/"+img.name+"/status", serviceToken, quotaImage(img.name, img.capacity, "2Gi"),
			"Content-Type", "application/yaml"); code != http.StatusOK {
			t.Fatalf("write image status: %d %s", code, resp)
		}
	}
	create(quotas, adminToken, myQuota)
	create(claims, userToken, claim("big-claim", "450Gi"))
	waitQuotaUsed(t, g, "450Gi")

	before := specCount(t, js)
	code, resp := g.do("POST", vms, userToken, quotaVM("too-big", "grows-to-100gi"), "Content-Type", "application/yaml")
	st := decode(t, resp)
	wantMsg := `virtualmachines.vmoperator.vmware.com "too-big" is forbidden: exceeded quota: my-quota, ` +
		`requested: requests.storage=100Gi, used: requests.storage=450Gi, limited: requests.storage=500Gi`
	if code != http.StatusForbidden || st["reason"] != "Forbidden" || st["message"] != wantMsg {
		t.Fatalf("VM that can grow to 100Gi: %d %s, want 403 %q", code, resp, wantMsg)
	}
	if after := specCount(t, js); after != before {
		t.Errorf("the refused VM changed SPECS: %d messages, were %d", after, before)
	}

	create(vms, userToken, quotaVM("fits", "grows-to-20gi"))
	waitQuotaUsed(t, g, "470Gi") // reserved: the capacity of its image's disk

	// Once the storage service reports the VM's use, that is what it charges.
	code, resp = g.do("GET", vms+"/fits", adminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("get VM: %d %s", code, resp)
	}
	vm := decode(t, resp)
	vm["status"] = map[string]any{"storage": map[string]any{"total": "16Gi"}}
	if code, resp := g.do("PUT", vms+"/fits/status", serviceToken, vm); code != http.StatusOK {
		t.Fatalf("report the VM's storage: %d %s", code, resp)
	}
	waitQuotaUsed(t, g, "466Gi")

	// Growing a claim beyond the quota is refused; within it, accepted.
	grow := func(size string) (int, []byte) {
		return g.do("PATCH", claims+"/big-claim", userToken, `{"spec":{"resources":{"requests":{"storage":"`+size+`"}}}}`,
			"Content-Type", "application/merge-patch+json")
	}
	if code, resp := grow("500Gi"); code != http.StatusForbidden || !strings.Contains(string(resp), "exceeded quota: my-quota, requested: requests.storage=50Gi") {
		t.Errorf("growing the claim by 50Gi: %d %s, want 403 exceeded quota", code, resp)
	}
	if code, resp := grow("460Gi"); code != http.StatusOK {
		t.Errorf("growing the claim by 10Gi: %d %s, want 200", code, resp)
	}
	waitQuotaUsed(t, g, "476Gi")

	out := g.kubectl(t, "get", "resourcequota", "-n", "my-namespace")
	fields := strings.Fields(out)
	if len(fields) < 8 || strings.Join(fields[:4], " ") != "NAME AGE REQUEST LIMIT" || fields[4] != "my-quota" ||
		strings.Join(fields[6:8], " ") != "requests.storage: 476Gi/500Gi" {
		t.Errorf("kubectl get resourcequota:\n%s\nwant NAME AGE REQUEST LIMIT and my-quota <age> requests.storage: 476Gi/500Gi", out)
	}
	out = g.kubectl(t, "describe", "quota", "my-quota", "-n", "my-namespace")
	if !slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool {
		return strings.Join(strings.Fields(line), " ") == "requests.storage 476Gi 500Gi"
	}) {
		t.Errorf("kubectl describe quota:\n%s\nwant the line requests.storage 476Gi 500Gi", out)
	}
}

// quotaGateway is a gateway of its own whose my-namespace has my-storage-class and
// my-quota (500Gi).
func quotaGateway(t *testing.T) *gateway {
	t.Helper()
	g := startGateway(t, newStreams(t), t.TempDir())
	if code, resp := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, resp)
	}
	if code, resp := g.do("POST", quotas, adminToken, myQuota); code != http.StatusCreated {
		t.Fatalf("create quota: %d %s", code, resp)
	}
	return g
}

// waitQuotaUsed waits until my-quota's status shows used requests.storage.
func waitQuotaUsed(t *testing.T, g *gateway, want string) {
	t.Helper()
	g.eventually("my-quota used "+want, func() bool {
		code, resp := g.do("GET", quotas+"/my-quota", adminToken, nil)
		if code != http.StatusOK {
			return false
		}
		q := decode(t, resp)
		return field(q, "status", "used", "requests.storage") == want && field(q, "status", "hard", "requests.storage") == "500Gi"
	})
}

// kubectl runs the installed kubectl as the admin against the gateway; without one the
// test fails.
func (g *gateway) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is required for this test: it is on every machine (v1.32)")
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: vmop
  cluster: {server: %q, certificate-authority: %q}
users:
- name: admin
  user: {token: %q}
contexts:
- name: admin
  context: {cluster: vmop, user: admin}
current-context: admin
`, g.URL, g.certs.CAFile, adminToken)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no cache from another run
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Creates racing for the last free space of a namespace are admitted one after the other:
// with 50Gi free, exactly two of six 20Gi claims are created.
func TestStorageQuotaRace(t *testing.T) {
	g := quotaGateway(t)
	if code, resp := g.do("POST", claims, userToken, claim("big-claim", "450Gi"), "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create claim: %d %s", code, resp)
	}
	codes := make(chan int)
	for i := range 6 {
		go func() {
			code, _ := g.do("POST", claims, userToken, claim(fmt.Sprintf("racer-%d", i), "20Gi"), "Content-Type", "application/yaml")
			codes <- code
		}()
	}
	got := map[int]int{}
	for range 6 {
		got[<-codes]++
	}
	if got[http.StatusCreated] != 2 || got[http.StatusForbidden] != 4 {
		t.Errorf("six 20Gi claims for 50Gi: %v created/refused by code, want 2 created (201) and 4 refused (403)", got)
	}
	waitQuotaUsed(t, g, "490Gi")
}

// Only the writes that charge more storage pass a quota namespace's gate one at a time:
// a claim's create and its larger request do; a label, or the same request again, does not
// (vmop_api_quota_holds_total counts the writes that held it).
func TestOnlyChargingWritesHoldTheQuota(t *testing.T) {
	g := quotaGateway(t)
	holds := func() float64 {
		t.Helper()
		code, body := g.do("GET", "/metrics", adminToken, nil)
		if code != http.StatusOK {
			t.Fatalf("metrics: %d %s", code, body)
		}
		return max(metricValue(string(body), `vmop_api_quota_holds_total{resource="persistentvolumeclaims"}`), 0)
	}
	patch := func(body string) {
		t.Helper()
		if code, resp := g.do("PATCH", claims+"/held", userToken, body, "Content-Type", "application/merge-patch+json"); code != http.StatusOK {
			t.Fatalf("patch %s: %d %s", body, code, resp)
		}
	}
	for _, step := range []struct {
		what  string
		write func()
		holds float64
	}{
		{"create", func() {
			if code, resp := g.do("POST", claims, userToken, claim("held", "10Gi"), "Content-Type", "application/yaml"); code != http.StatusCreated {
				t.Fatalf("create claim: %d %s", code, resp)
			}
		}, 1},
		{"a label", func() { patch(`{"metadata":{"labels":{"tier":"db"}}}`) }, 1},
		{"a larger request", func() { patch(`{"spec":{"resources":{"requests":{"storage":"20Gi"}}}}`) }, 2},
		{"the same request again", func() { patch(`{"spec":{"resources":{"requests":{"storage":"20Gi"}}}}`) }, 2},
	} {
		step.write()
		if got := holds(); got != step.holds {
			t.Errorf("after %s: %v writes held the quota, want %v", step.what, got, step.holds)
		}
	}
}
