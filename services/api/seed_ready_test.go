package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/vmop/vmop/services/api"
)

// A gateway is ready only once it serves the whole seeded inventory, images' status
// included (their display names resolve from the first request on): a client that waits
// for /readyz, as balancers and kubectl users do, never sees part of it.
func TestReadyOnlyOnceTheInventoryIsSeeded(t *testing.T) {
	const n = 200
	seed := slices.Clone(seedNamespaces)
	for i := range n {
		seed = append(seed, map[string]any{
			"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachineImage",
			"metadata": map[string]any{"name": fmt.Sprintf("vmi-%d", i), "namespace": "my-namespace"},
			"spec":     map[string]any{},
			"status":   map[string]any{"name": fmt.Sprintf("image-%d", i)},
		})
	}
	g := startGatewayWith(t, newStreams(t), t.TempDir(), func(c *api.Config) { c.Seed = seed })

	for i := range n {
		var img struct {
			Status struct{ Name string } `json:"status"`
		}
		code, body := g.do("GET", fmt.Sprintf("%s/vmi-%d", images, i), adminToken, nil)
		if code == http.StatusOK {
			if err := json.Unmarshal(body, &img); err != nil {
				t.Fatal(err)
			}
		}
		if code != http.StatusOK || img.Status.Name != fmt.Sprintf("image-%d", i) {
			t.Fatalf("image vmi-%d once the gateway is ready: %d, status.name %q; want 200, image-%d", i, code, img.Status.Name, i)
		}
	}
}
