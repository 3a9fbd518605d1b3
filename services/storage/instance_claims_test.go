package storage

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
)

// instanceClaimOn is an instance storage claim for the host, as ensureInstanceClaims writes it.
func instanceClaimOn(t *testing.T, name, host string) *pvcFixture {
	t.Helper()
	h, err := find.NewFinder(vc.Client.Client).HostSystem(t.Context(), "*/"+host)
	if err != nil {
		t.Fatal(err)
	}
	c := newPVCFixture(name, "2Gi", "my-storage-class")
	c.meta()["labels"] = map[string]any{model.LabelInstanceStorage: "true"}
	c.meta()["annotations"] = map[string]any{model.AnnotationSelectedNode: host,
		model.AnnotationInstanceStorageSelectedNodeMOID: h.Reference().Value}
	return c
}

// An instance storage claim is provisioned on the local datastore of the host placement
// chose; on a host without one, it stays Pending and says why.
func TestInstanceClaimOnHostDatastore(t *testing.T) {
	js := startService(t)
	host := inventory.InstanceStorageHosts[0]
	c := instanceClaimOn(t, "instance-pvc-test-0", host)
	c.put(t, js)
	c.waitBound(t, js)
	vols := cnsVolumes(t, "pvc-"+c.UID)
	if len(vols) != 1 {
		t.Fatalf("CNS volumes of the claim: %d, want 1", len(vols))
	}
	finder, _, err := vc.Finder(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ds, err := finder.Datastore(t.Context(), inventory.LocalDatastore(host))
	if err != nil {
		t.Fatal(err)
	}
	var m mo.Datastore
	if err := ds.Properties(t.Context(), ds.Reference(), []string{"summary.url"}, &m); err != nil {
		t.Fatal(err)
	}
	if vols[0].DatastoreUrl != m.Summary.Url {
		t.Errorf("volume on datastore %s, want %s's own %s (%s)", vols[0].DatastoreUrl, host, inventory.LocalDatastore(host), m.Summary.Url)
	}

	noLocal := inventory.Zones[0].Hosts[0] // esx-a1 has no datastore of its own
	bad := instanceClaimOn(t, "instance-pvc-test-1", noLocal)
	bad.put(t, js)
	_, st := bad.wait(t, js, "Pending with the reason", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool {
		for _, cond := range st.Conditions {
			if strings.Contains(cond.Message, "has no usable local datastore for instance storage") {
				return true
			}
		}
		return false
	})
	if st.Phase != model.ClaimPending || len(cnsVolumes(t, "pvc-"+bad.UID)) != 0 {
		t.Errorf("claim on %s: phase %s; want Pending and no CNS volume", noLocal, st.Phase)
	}
}
