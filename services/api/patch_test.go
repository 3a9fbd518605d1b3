package api_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentPatchesLoseNothing: merge patches of different labels sent at the same
// time all succeed and all labels are kept (a patch that lost the compare-and-swap is
// applied again to the new state, as kube-apiserver retries), while a patch naming a
// stale resourceVersion is a 409.
func TestConcurrentPatchesLoseNothing(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	created := createClass(t, g)
	path := classes + "/my-vm-class"
	const n = 4
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			codes[i], _ = g.do("PATCH", path, adminToken, `{"metadata":{"labels":{"team-`+strconv.Itoa(i)+`":"x"}}}`,
				"Content-Type", "application/merge-patch+json")
		})
	}
	wg.Wait()
	_, body := g.do("GET", path, adminToken, nil)
	labels, _ := field(decode(t, body), "metadata", "labels").(map[string]any)
	for i := range n {
		if codes[i] != http.StatusOK || labels["team-"+strconv.Itoa(i)] != "x" {
			t.Errorf("patch %d: %d, labels %v", i, codes[i], labels)
		}
	}
	stale := field(created, "metadata", "resourceVersion").(string)
	code, body := g.do("PATCH", path, adminToken, `{"metadata":{"resourceVersion":"`+stale+`","labels":{"late":"x"}}}`,
		"Content-Type", "application/merge-patch+json")
	if code != http.StatusConflict {
		t.Errorf("patch with a stale resourceVersion: %d %s, want 409", code, body)
	}
}
