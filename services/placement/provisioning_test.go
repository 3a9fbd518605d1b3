package placement

import (
	"strings"
	"sync"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// spec.advanced.defaultVolumeProvisioningMode reaches the image's disks through the
// library deploy, as its OVF import's disk provisioning (vcsim accepts the type but does
// not set the disks' backing by it: the import is what is checked).
func TestDeployProvisionsTheImageDisks(t *testing.T) {
	h := newHarness(t)
	h.seedClassAndImage()
	var mu sync.Mutex
	imports := map[string]string{} // entity name → disk provisioning
	seeded.sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		if req, ok := m.Body.(*types.CreateImportSpec); ok {
			if p := req.Cisp.GetOvfCreateImportSpecParams(); strings.HasPrefix(p.EntityName, "provisioned-") {
				mu.Lock()
				imports[p.EntityName] = p.DiskProvisioning
				mu.Unlock()
			}
		}
		return nil, nil
	})
	t.Cleanup(func() { seeded.sim.Intercept(nil) })
	h.runService()
	for _, tt := range []struct {
		mode model.VolumeProvisioningMode
		want types.OvfCreateImportSpecParamsDiskProvisioningType
	}{
		{"", ""},
		{model.VolumeProvisioningModeThin, types.OvfCreateImportSpecParamsDiskProvisioningTypeThin},
		{model.VolumeProvisioningModeThick, types.OvfCreateImportSpecParamsDiskProvisioningTypeThick},
		{model.VolumeProvisioningModeThickEagerZero, types.OvfCreateImportSpecParamsDiskProvisioningTypeEagerZeroedThick},
	} {
		v := newTestVM("provisioned-" + strings.ToLower(string(tt.mode)))
		obj := v.object(1, false)
		if tt.mode != "" {
			obj["spec"].(map[string]any)["advanced"] = map[string]any{"defaultVolumeProvisioningMode": string(tt.mode)}
		}
		h.append(v.ref, obj)
		h.waitSlice(v.ref, "created", created)
		mu.Lock()
		got, ok := imports[v.ref.Name]
		mu.Unlock()
		if !ok || got != string(tt.want) {
			t.Errorf("mode %q: the import's disk provisioning is %q (seen %t), want %q", tt.mode, got, ok, tt.want)
		}
	}
}
