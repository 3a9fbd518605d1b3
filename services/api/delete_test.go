package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

const storageClass = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: my-storage-class
provisioner: csi.vsphere.vmware.com
parameters:
  storagePolicyID: aa6d5a82-1c88-45da-85d3-3d74b91a5bad
allowVolumeExpansion: true
`

const ownedVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: owned-vm
spec:
  className: my-vm-class
  image:
    kind: VirtualMachineImage
    name: vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
`

// A deleted VirtualMachine stays, marked, until every owning service has released it.
func TestDeleteWaitsForEveryOwner(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	uid := createOwnedVM(t, g)

	code, body := g.do("DELETE", vms+"/owned-vm", adminToken, nil)
	if code != http.StatusOK || field(decode(t, body), "metadata", "deletionTimestamp") == nil {
		t.Fatalf("delete: %d %s, want the object marked with deletionTimestamp", code, body)
	}
	if gen := field(decode(t, body), "metadata", "generation"); gen != 2.0 {
		t.Errorf("generation of the VM being deleted: %v, want 2 (its deletion is a new desire)", gen)
	}
	owners := []string{model.ServicePlacement, model.ServicePower, model.ServiceStorage, model.ServiceNetwork, model.ServiceCrypto}
	for _, svc := range owners[:len(owners)-1] {
		release(t, js, svc, uid)
	}
	// Once the read model has folded the four releases (the object's resourceVersion
	// names the newest slice), the object must still be there.
	seqs := statusSeqs(t, js)
	want := fmt.Sprintf(".%d", slices.Max(seqs))
	g.eventually("four releases folded", func() bool {
		code, body := g.do("GET", vms+"/owned-vm", adminToken, nil)
		rv, _ := field(decode(t, body), "metadata", "resourceVersion").(string)
		return code != http.StatusOK || strings.HasSuffix(rv, want)
	})
	if code, body := g.do("GET", vms+"/owned-vm", adminToken, nil); code != http.StatusOK || len(seqs) != 4 {
		t.Fatalf("VM vanished before the last owner released it: %d %s (%d slices)", code, body, len(seqs))
	}
	release(t, js, owners[len(owners)-1], uid)
	g.eventually("VM removed after the last release", func() bool {
		code, _ := g.do("GET", vms+"/owned-vm", adminToken, nil)
		return code == http.StatusNotFound
	})
	// The slices are purged after the removal is recorded, so they may outlive the 404
	// briefly.
	g.eventually("status slices purged", func() bool { return len(statusSeqs(t, js)) == 0 })
}

func release(t *testing.T, js jetstream.JetStream, service, uid string) {
	t.Helper()
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "owned-vm"}
	if _, err := events.PublishStatus(context.Background(), js, ref, events.Slice{Service: service, UID: uid, Generation: 1, Released: true}); err != nil {
		t.Fatal(err)
	}
}

// createOwnedVM creates the storage class and ownedVM, which the services own, and returns
// the VM's uid.
func createOwnedVM(t *testing.T, g *gateway) string {
	t.Helper()
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	code, body := g.do("POST", vms, adminToken, ownedVM, "Content-Type", "application/yaml")
	if code != http.StatusCreated {
		t.Fatalf("create VM: %d %s", code, body)
	}
	return field(decode(t, body), "metadata", "uid").(string)
}

// statusSeqs lists the VM's slices still in STATUS.
func statusSeqs(t *testing.T, js jetstream.JetStream) []uint64 {
	t.Helper()
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "owned-vm"}
	var seqs []uint64
	for _, svc := range []string{model.ServicePlacement, model.ServicePower, model.ServiceStorage, model.ServiceNetwork, model.ServiceCrypto} {
		if rec, err := events.LastStatus(context.Background(), js, ref, svc); err == nil {
			seqs = append(seqs, rec.Seq)
		}
	}
	return seqs
}

// An object without finalizers or owning services goes at once, and its status slices with
// it: a ResourceQuota's, which the gateway's quota keeper published, leaves nothing in STATUS.
func TestDeleteAtOncePurgesStatus(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	if code, resp := g.do("POST", quotas, adminToken, myQuota); code != http.StatusCreated {
		t.Fatalf("create quota: %d %s", code, resp)
	}
	ref := events.Ref{Plural: "resourcequotas", Namespace: "my-namespace", Name: "my-quota"}
	g.eventually("the quota's status slice", func() bool {
		_, err := events.LastStatus(context.Background(), js, ref, "quota")
		return err == nil
	})
	if code, resp := g.do("DELETE", quotas+"/my-quota", adminToken, nil); code != http.StatusOK {
		t.Fatalf("delete quota: %d %s", code, resp)
	}
	if _, err := events.LastStatus(context.Background(), js, ref, "quota"); err == nil {
		t.Error("the deleted quota's status slice is still in STATUS")
	}
}

// A DELETE's preconditions are kept as kube-apiserver keeps them: an object of another UID
// (a re-creation under the name) or another version than they name is 409 and stays; the
// one they name is deleted.
func TestDeletePreconditions(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	created := createClass(t, g)
	name := field(created, "metadata", "name").(string)
	uid := field(created, "metadata", "uid").(string)
	rv := field(created, "metadata", "resourceVersion").(string)
	del := func(pre string) (int, []byte) {
		return g.do("DELETE", classes+"/"+name, adminToken,
			`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":`+pre+`}`, "Content-Type", "application/json")
	}
	for _, pre := range []string{`{"uid":"another-incarnation"}`, `{"resourceVersion":"1.0"}`} {
		if code, resp := del(pre); code != http.StatusConflict || !strings.Contains(string(resp), "Precondition failed") {
			t.Errorf("DELETE with preconditions %s: %d %s, want 409 Precondition failed", pre, code, resp)
		}
	}
	if code, resp := g.do("GET", classes+"/"+name, adminToken, nil); code != http.StatusOK {
		t.Fatalf("the class after refused deletes: %d %s", code, resp)
	}
	if code, resp := del(`{"uid":"` + uid + `","resourceVersion":"` + rv + `"}`); code != http.StatusOK {
		t.Errorf("DELETE with the object's own preconditions: %d %s, want 200", code, resp)
	}
}

// An object being deleted gains no finalizer, as in Kubernetes: one added by a patch would
// hold the deletion open for good (422, nothing stored); keeping or removing its own is fine.
func TestDeletingObjectGainsNoFinalizer(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	createOwnedVM(t, g)
	if code, body := g.do("DELETE", vms+"/owned-vm", adminToken, nil); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	code, body := g.do("PATCH", vms+"/owned-vm", adminToken, `{"metadata":{"finalizers":["example.com/hold"]}}`, "Content-Type", "application/merge-patch+json")
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "no new finalizers can be added if the object is being deleted") {
		t.Errorf("adding a finalizer to the deleting VM: %d %s, want 422", code, body)
	}
	_, body = g.do("GET", vms+"/owned-vm", adminToken, nil)
	if fs, _ := field(decode(t, body), "metadata", "finalizers").([]any); slices.Contains(fs, any("example.com/hold")) {
		t.Errorf("finalizers after the refused patch: %v", fs)
	}
	code, body = g.do("PATCH", vms+"/owned-vm", adminToken, `{"metadata":{"labels":{"still":"editable"}}}`, "Content-Type", "application/merge-patch+json")
	if code != http.StatusOK {
		t.Errorf("a label on the deleting VM: %d %s, want 200", code, body)
	}
}
