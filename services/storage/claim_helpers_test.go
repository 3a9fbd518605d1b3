package storage

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// pvcFixture is a PersistentVolumeClaim as admission stores it, for the tests to drive.
type pvcFixture struct {
	Ref events.Ref
	UID string
	Obj map[string]any
	seq uint64
	gen int64
}

// newPVCFixture is a claim of the size in my-namespace with the pvc-protection finalizer.
func newPVCFixture(name, size, class string) *pvcFixture {
	uid := uuid.NewString()
	return &pvcFixture{
		Ref: events.Ref{Plural: pluralClaims, Namespace: "my-namespace", Name: name},
		UID: uid,
		Obj: map[string]any{
			"apiVersion": "v1", "kind": "PersistentVolumeClaim",
			"metadata": map[string]any{
				"name": name, "namespace": "my-namespace", "uid": uid,
				"finalizers": []any{model.FinalizerPVCProtection},
			},
			"spec": map[string]any{
				"accessModes":      []any{"ReadWriteOnce"},
				"volumeMode":       "Block",
				"storageClassName": class,
				"resources":        map[string]any{"requests": map[string]any{"storage": size}},
			},
		},
	}
}

func (c *pvcFixture) spec() map[string]any { return c.Obj["spec"].(map[string]any) }
func (c *pvcFixture) meta() map[string]any { return c.Obj["metadata"].(map[string]any) }
func (c *pvcFixture) setSize(size string) {
	c.spec()["resources"] = map[string]any{"requests": map[string]any{"storage": size}}
}
func (c *pvcFixture) markDeleting()            { c.meta()["deletionTimestamp"] = "2026-11-22T00:00:00Z" }
func (c *pvcFixture) volumeName() string       { s, _ := c.spec()["volumeName"].(string); return s }
func (c *pvcFixture) hasFinalizer() bool       { f, _ := c.meta()["finalizers"].([]any); return len(f) > 0 }
func (c *pvcFixture) ownedBy(o map[string]any) { c.meta()["ownerReferences"] = []any{o} }

// put appends the claim's next record on top of the newest one (the service may have
// recorded its volume meanwhile: that record is read back first, as a client's update would).
func (c *pvcFixture) put(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	c.gen++
	c.meta()["generation"] = c.gen
	for {
		if c.seq != 0 {
			rec, err := events.LastSpec(t.Context(), js, c.Ref)
			if err != nil {
				t.Fatal(err)
			}
			var stored map[string]any
			if err := json.Unmarshal(rec.Body, &stored); err != nil {
				t.Fatal(err)
			}
			if v, ok := stored["spec"].(map[string]any)["volumeName"]; ok && c.volumeName() == "" {
				c.spec()["volumeName"] = v
			}
			c.seq = rec.Seq
		}
		body, err := json.Marshal(c.Obj)
		if err != nil {
			t.Fatal(err)
		}
		seq, err := events.AppendSpec(t.Context(), js, c.Ref, events.OpPut, body, c.seq, nil)
		if errors.Is(err, events.ErrConflict) && c.seq != 0 {
			continue // the service wrote the claim meanwhile (its binding): on the newer record
		}
		if err != nil {
			t.Fatal(err)
		}
		c.seq = seq
		return
	}
}

// stored is the claim's newest SPECS record.
func (c *pvcFixture) stored(t *testing.T, js jetstream.JetStream) (events.SpecRecord, model.PersistentVolumeClaim) {
	t.Helper()
	rec, err := events.LastSpec(t.Context(), js, c.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var pvc model.PersistentVolumeClaim
	if err := json.Unmarshal(rec.Body, &pvc); err != nil {
		t.Fatal(err)
	}
	return rec, pvc
}

// wait waits, with a deadline, for the storage slice about the claim that satisfies ok.
func (c *pvcFixture) wait(t *testing.T, js jetstream.JetStream, what string, ok func(events.Slice, model.PersistentVolumeClaimStatus) bool) (events.Slice, model.PersistentVolumeClaimStatus) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rec, err := events.LastStatus(t.Context(), js, c.Ref, model.ServiceStorage)
		var st model.PersistentVolumeClaimStatus
		if err == nil && rec.Slice.UID == c.UID {
			if len(rec.Slice.Status) > 0 {
				if err := json.Unmarshal(rec.Slice.Status, &st); err != nil {
					t.Fatalf("decode status: %v", err)
				}
			}
			if ok(rec.Slice, st) {
				return rec.Slice, st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no storage slice with %s before the deadline; last: %s released %v (err %v)", c.Ref, what, rec.Slice.Status, rec.Slice.Released, err)
		}
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}

func (c *pvcFixture) waitBound(t *testing.T, js jetstream.JetStream) model.PersistentVolumeClaimStatus {
	t.Helper()
	_, st := c.wait(t, js, "phase Bound", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool {
		return st.Phase == model.ClaimBound
	})
	return st
}

func (c *pvcFixture) waitReleased(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	c.wait(t, js, "the claim released", func(s events.Slice, _ model.PersistentVolumeClaimStatus) bool { return s.Released })
}

// cnsVolumes are the CNS volumes named name.
func cnsVolumes(t *testing.T, name string) []cnstypes.CnsVolume {
	t.Helper()
	cc, err := cns.NewClient(t.Context(), vc.Client.Client)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cc.QueryVolume(t.Context(), &cnstypes.CnsQueryFilter{Names: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Volumes
}

func capacityMB(v cnstypes.CnsVolume) int64 {
	return v.BackingObjectDetails.GetCnsBackingObjectDetails().CapacityInMb
}

// putStorageClass adds a StorageClass with the policy of my-storage-class and the reclaim
// policy ("" for the default, Delete).
func putStorageClass(t *testing.T, js jetstream.JetStream, name string, expand bool, reclaim string) {
	t.Helper()
	var policy string
	for _, o := range vc.Objects {
		if o["kind"] == "StorageClass" && o["metadata"].(map[string]any)["name"] == "my-storage-class" {
			policy = o["parameters"].(map[string]any)[model.StoragePolicyIDParameter].(string)
		}
	}
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
		"metadata":    map[string]any{"name": name, "uid": uuid.NewString()},
		"provisioner": "csi.vsphere.vmware.com", "parameters": map[string]any{model.StoragePolicyIDParameter: policy},
		"allowVolumeExpansion": expand, "reclaimPolicy": reclaim,
	})
	if _, err := events.AppendSpec(context.Background(), js, events.Ref{Plural: "storageclasses", Name: name}, events.OpPut, body, 0, nil); err != nil {
		t.Fatal(err)
	}
}

// lastEvent is the data of the newest CloudEvent of the type about the claim, nil for none.
func (c *pvcFixture) lastEvent(t *testing.T, js jetstream.JetStream, typ string) *claimEvent {
	t.Helper()
	st, err := js.Stream(t.Context(), events.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := st.GetLastMsgForSubject(t.Context(), events.EventSubject(c.Ref, typ))
	if err != nil {
		return nil
	}
	var ce events.CloudEvent
	var data claimEvent
	if err := json.Unmarshal(msg.Data, &ce); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ce.Data, &data); err != nil {
		t.Fatal(err)
	}
	return &data
}
