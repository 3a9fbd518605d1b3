package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// copyBomb is a JSON patch of n copy operations that alternate between two objects under
// spec, each copying the other into itself, so that every operation doubles the object.
func copyBomb(n int) string {
	var ops []string
	for i := range n {
		from, to := "/spec/image", "/spec/reserved"
		if i%2 == 1 {
			from, to = to, from
		}
		ops = append(ops, fmt.Sprintf(`{"op":"copy","from":%q,"path":"%s/c%d"}`, from, to, i))
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// The 30-operation copy patch that took a gateway to 3.8 GB, sent by an ordinary user
// to a VM of theirs, is refused within a second with 422 (the copy-size limit; kube-
// apiserver answers 422 to a patch that does not apply), and the process's heap stays
// within a few MB of its baseline while the request runs.
func TestCopyPatchCannotExhaustMemory(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	vm := `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","metadata":{"name":"bomb"},
		"spec":{"className":"my-vm-class","image":{"kind":"VirtualMachineImage","name":"vmi-0a0044d7c690bcbea"},
		"storageClass":"my-storage-class","reserved":{"resourcePolicyName":"p"}}}`
	if code, body := g.do("POST", vms, userToken, vm); code != http.StatusCreated {
		t.Fatalf("create VM: %d %s", code, body)
	}
	patch := copyBomb(30)
	if len(patch) > 2500 {
		t.Fatalf("the patch is %d bytes, want about 2 KB", len(patch))
	}
	before := specCount(t, js)

	send := func() {
		t.Helper()
		code, body := g.do("PATCH", vms+"/bomb", userToken, patch, "Content-Type", "application/json-patch+json")
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "copy") {
			t.Errorf("copy patch: %d %s, want 422 naming the copy limit", code, body)
		}
	}
	// Timed as it runs, then again with the heap sampled (the sampling's frequent
	// collections slow it down).
	start := time.Now()
	send()
	if took := time.Since(start); took > raceSlowdown*time.Second {
		t.Errorf("the copy patch took %v, want under a second (times %d under the race detector)", took, raceSlowdown)
	} else {
		t.Logf("the copy patch was refused after %v", took)
	}
	baseline, peak := heapDuring(send)
	t.Logf("heap in use: baseline %.1f MB, peak %.1f MB while the patch ran", float64(baseline)/(1<<20), float64(peak)/(1<<20))
	if grew := int64(peak) - int64(baseline); grew > 8<<20 {
		t.Errorf("the heap grew by %.1f MB during the request, want a few", float64(grew)/(1<<20))
	}
	if after := specCount(t, js); after != before {
		t.Errorf("SPECS holds %d messages, want %d: a refused patch stores nothing", after, before)
	}
}

// heapDuring runs f and returns the heap in use before it (after a collection) and the
// most it was while f ran, sampled every millisecond. The collector runs at 5% growth
// meanwhile, so that the peak is what f kept alive rather than garbage not collected yet.
func heapDuring(f func()) (baseline, peak uint64) {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseline = ms.HeapInuse
	var max atomic.Uint64
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > max.Load() {
				max.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return baseline, max.Load()
}

// An object that would not fit in a NATS message, as its SPECS record or inside its
// event, is refused with 413 however it arrives (create, update, either patch), and a
// JSON patch of more than 10,000 operations too, as kube-apiserver does; nothing is
// stored.
func TestObjectsTooLargeForNATSAre413(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	createClass(t, g)
	before := specCount(t, js)
	classWith := func(description string) string {
		return fmt.Sprintf(`{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachineClass",
			"metadata":{"name":"big"},"spec":{"description":%q,"hardware":{"cpus":1}}}`, description)
	}
	twoMiB := strings.Repeat("x", 2<<20)
	// A record that fits in 1 MiB, but not with the envelope of its created event.
	nearlyOneMiB := strings.Repeat("x", 1<<20-20<<10)
	tooManyOps := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/kind","value":"VirtualMachineClass"},`, 10001), ",") + "]"
	for _, tc := range []struct {
		name, method, path, contentType, body string
	}{
		{"create 2 MiB", "POST", classes, "application/json", classWith(twoMiB)},
		{"create without room for its event", "POST", classes, "application/json", classWith(nearlyOneMiB)},
		{"update 2 MiB", "PUT", classes + "/my-vm-class", "application/json", strings.Replace(classWith(twoMiB), `"big"`, `"my-vm-class"`, 1)},
		{"merge patch to 2 MiB", "PATCH", classes + "/my-vm-class", "application/merge-patch+json", fmt.Sprintf(`{"spec":{"description":%q}}`, twoMiB)},
		{"JSON patch to 2 MiB", "PATCH", classes + "/my-vm-class", "application/json-patch+json", fmt.Sprintf(`[{"op":"add","path":"/spec/description","value":%q}]`, twoMiB)},
		{"10,001 operations", "PATCH", classes + "/my-vm-class", "application/json-patch+json", tooManyOps},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := g.do(tc.method, tc.path, adminToken, tc.body, "Content-Type", tc.contentType)
			if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"reason":"RequestEntityTooLarge"`) {
				t.Errorf("%d %.300s, want a 413 Status", code, body)
			}
		})
	}
	if after := specCount(t, js); after != before {
		t.Errorf("SPECS holds %d messages, want %d: a refused write stores nothing", after, before)
	}
	// 10,000 operations are allowed.
	allowed := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/kind","value":"VirtualMachineClass"},`, 10000), ",") + "]"
	if code, body := g.do("PATCH", classes+"/my-vm-class", adminToken, allowed, "Content-Type", "application/json-patch+json"); code != http.StatusOK {
		t.Errorf("10,000 operations: %d %.300s, want 200", code, body)
	}
}

// An object's events carry its status too: a spec change that would fit alone but not
// with the status the services reported is refused with 413 as well.
func TestObjectAndItsStatusMustFitTogether(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	uid := field(createClass(t, g), "metadata", "uid").(string)
	status, err := json.Marshal(map[string]string{"note": strings.Repeat("y", 400<<10)})
	if err != nil {
		t.Fatal(err)
	}
	ref := events.Ref{Plural: "virtualmachineclasses", Namespace: "my-namespace", Name: "my-vm-class"}
	if _, err := events.PublishStatus(context.Background(), js, ref, events.Slice{
		Service: model.ServicePlacement, UID: uid, Generation: 1, Status: status,
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the status folded", func() bool {
		code, body := g.do("GET", classes+"/my-vm-class", adminToken, nil)
		return code == http.StatusOK && len(body) > 400<<10
	})
	describe := func(n int) string {
		return fmt.Sprintf(`{"spec":{"description":%q}}`, strings.Repeat("x", n))
	}
	// 600 KiB of spec: under the limit alone, over it with the 400 KiB status.
	if code, body := g.do("PATCH", classes+"/my-vm-class", adminToken, describe(600<<10), "Content-Type", "application/merge-patch+json"); code != http.StatusRequestEntityTooLarge {
		t.Errorf("spec growing past the limit with the status: %d %.300s, want 413", code, body)
	}
	if code, body := g.do("PATCH", classes+"/my-vm-class", adminToken, describe(400<<10), "Content-Type", "application/merge-patch+json"); code != http.StatusOK {
		t.Errorf("spec and status within the limit: %d %.300s, want 200", code, body)
	}
}
