package main

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// seedPVC is the seed's my-pvc, verbatim (Storage, "Adding a PVC-backed volume").
const seedPVC = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: my-pvc
spec:
  accessModes:
  - ReadWriteOnce
  volumeMode: Block
  resources:
    requests:
      storage: 8Gi
  storageClassName: my-storage-class
`

// TestKubectlPVC walks issue #11's claim side with kubectl, each role on its own NATS
// identity: my-pvc becomes Bound to one CNS volume of 8Gi that its VOLUME column names,
// describe prints it, bad claims are refused with field errors and nothing provisioned,
// the claim grows but never shrinks, and deleting it deletes the CNS volume; a claim owned
// by a VM is deleted with it.
func TestKubectlPVC(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cns.NewClient(t.Context(), vc.Client)
	if err != nil {
		t.Fatal(err)
	}
	cnsVolume := func(name string) []cnstypes.CnsVolume {
		res, err := cc.QueryVolume(t.Context(), &cnstypes.CnsQueryFilter{Names: []string{name}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Volumes
	}

	tp.must(t, "user", seedPVC, "apply", "-f", "-")
	tp.eventually("my-pvc Bound", func() bool {
		return tp.must(t, "user", "", "get", "pvc", "my-pvc", "-o", "jsonpath={.status.phase}") == "Bound"
	})
	uid := tp.must(t, "user", "", "get", "pvc", "my-pvc", "-o", "jsonpath={.metadata.uid}")
	vols := cnsVolume("pvc-" + uid)
	if len(vols) != 1 {
		t.Fatalf("CNS volumes of my-pvc: %d, want 1", len(vols))
	}
	id := vols[0].VolumeId.Id
	row := strings.Fields(strings.Split(strings.TrimSpace(tp.must(t, "user", "", "get", "pvc", "my-pvc", "--no-headers")), "\n")[0])
	if want := []string{"my-pvc", "Bound", id, "8Gi", "RWO", "my-storage-class"}; len(row) < len(want) || strings.Join(row[:len(want)], " ") != strings.Join(want, " ") {
		t.Errorf("kubectl get pvc: %v, want %v and the age", row, want)
	}
	if got := tp.must(t, "user", "", "get", "pvc", "my-pvc", "-o", "jsonpath={.metadata.finalizers}"); !strings.Contains(got, "kubernetes.io/pvc-protection") {
		t.Errorf("finalizers %s, want kubernetes.io/pvc-protection", got)
	}

	if out := tp.must(t, "user", seedPVC, "apply", "-f", "-"); !strings.Contains(out, "unchanged") {
		t.Errorf("applying my-pvc again: %s, want unchanged (the recorded volume and finalizer kept)", out)
	}
	if got := tp.must(t, "user", "", "get", "pvc", "my-pvc", "-o", "jsonpath={.spec.volumeName}"); got != id {
		t.Errorf("volumeName after a second apply: %q, want %q", got, id)
	}

	described := tp.must(t, "user", "", "describe", "pvc", "my-pvc")
	for _, want := range []string{"Name:", "my-pvc", "StorageClass:", "Status:", "Bound", "Volume:", id, "Capacity:", "8Gi", "Access Modes:", "RWO", "VolumeMode:", "Block", "Used By:", "<none>", "Finalizers:"} {
		if !strings.Contains(described, want) {
			t.Errorf("kubectl describe pvc lacks %q:\n%s", want, described)
		}
	}

	tp.eventually("describe pvc lists ProvisioningSucceeded", func() bool {
		return strings.Contains(tp.must(t, "user", "", "describe", "pvc", "my-pvc"), "ProvisioningSucceeded")
	})

	// Bad claims: a clear field error each, nothing stored or provisioned.
	for _, bad := range []struct{ name, manifest, want string }{
		{"missing-class", strings.Replace(strings.ReplaceAll(seedPVC, "my-pvc", "missing-class"), "storageClassName: my-storage-class", "storageClassName: no-such-class", 1),
			`spec.storageClassName: Not found: "no-such-class"`},
		{"bad-size", strings.Replace(strings.ReplaceAll(seedPVC, "my-pvc", "bad-size"), "storage: 8Gi", "storage: 8Zi", 1),
			`spec.resources.requests[storage]: Invalid value: "8Zi"`},
		{"no-size", strings.Replace(strings.ReplaceAll(seedPVC, "my-pvc", "no-size"), "      storage: 8Gi\n", "      {}\n", 1),
			`spec.resources.requests[storage]: Required value`},
		{"shared-fs", strings.Replace(strings.Replace(strings.ReplaceAll(seedPVC, "my-pvc", "shared-fs"), "ReadWriteOnce", "ReadWriteMany", 1), "volumeMode: Block", "volumeMode: Filesystem", 1),
			`spec.accessModes[0]: Invalid value: "ReadWriteMany"`},
		{"bound-by-user", strings.Replace(strings.ReplaceAll(seedPVC, "my-pvc", "bound-by-user"), "  storageClassName:", "  volumeName: "+id+"\n  storageClassName:", 1),
			`spec.volumeName: Forbidden`},
	} {
		out, err := tp.as("user", bad.manifest, "apply", "-f", "-")
		if err == nil || !strings.Contains(out, bad.want) {
			t.Errorf("%s: kubectl apply: %v\n%s\nwant an error with %q", bad.name, err, out, bad.want)
		}
		if out, err := tp.as("user", "", "get", "pvc", bad.name); err == nil || !strings.Contains(out, "NotFound") && !strings.Contains(out, "not found") {
			t.Errorf("%s: stored although refused: %v\n%s", bad.name, err, out)
		}
	}

	// Shrinking is refused; growing extends the CNS volume.
	out, err := tp.as("user", "", "patch", "pvc", "my-pvc", "--type", "merge", "-p", `{"spec":{"resources":{"requests":{"storage":"4Gi"}}}}`)
	if err == nil || !strings.Contains(out, "spec.resources.requests[storage]: Forbidden") {
		t.Errorf("shrinking my-pvc: %v\n%s\nwant a Forbidden field error", err, out)
	}
	tp.must(t, "user", "", "patch", "pvc", "my-pvc", "--type", "merge", "-p", `{"spec":{"resources":{"requests":{"storage":"12Gi"}}}}`)
	tp.eventually("my-pvc at 12Gi", func() bool {
		return tp.must(t, "user", "", "get", "pvc", "my-pvc", "-o", "jsonpath={.status.capacity.storage}") == "12Gi"
	})
	if got := cnsVolume("pvc-" + uid)[0].BackingObjectDetails.GetCnsBackingObjectDetails().CapacityInMb; got != 12288 {
		t.Errorf("CNS volume of %d MB after the resize, want 12288", got)
	}

	tp.must(t, "user", "", "delete", "pvc", "my-pvc", "--wait=true", "--timeout=60s")
	if out, err := tp.as("user", "", "get", "pvc", "my-pvc"); err == nil || !strings.Contains(out, "NotFound") && !strings.Contains(out, "not found") {
		t.Errorf("my-pvc after its deletion: %v\n%s", err, out)
	}
	if n := len(cnsVolume("pvc-" + uid)); n != 0 {
		t.Errorf("CNS volumes of the deleted my-pvc: %d, want none", n)
	}

	// A claim owned by a VM goes with it (garbage collection), and so does its volume.
	tp.must(t, "user", admissionVM("owner-vm", "", ""), "apply", "-f", "-")
	vmUID := tp.must(t, "user", "", "get", "vm", "owner-vm", "-o", "jsonpath={.metadata.uid}")
	owned := strings.Replace(strings.ReplaceAll(seedPVC, "my-pvc", "owned-pvc"), "  name: owned-pvc\n",
		"  name: owned-pvc\n  ownerReferences:\n  - apiVersion: vmoperator.vmware.com/v1alpha5\n    kind: VirtualMachine\n"+
			"    name: owner-vm\n    uid: "+vmUID+"\n", 1)
	tp.must(t, "user", owned, "apply", "-f", "-")
	tp.eventually("owned-pvc Bound", func() bool {
		return tp.must(t, "user", "", "get", "pvc", "owned-pvc", "-o", "jsonpath={.status.phase}") == "Bound"
	})
	ownedUID := tp.must(t, "user", "", "get", "pvc", "owned-pvc", "-o", "jsonpath={.metadata.uid}")
	tp.must(t, "user", "", "delete", "vm", "owner-vm", "--wait=true", "--timeout=60s")
	tp.eventually("owned-pvc collected", func() bool {
		out, err := tp.as("user", "", "get", "pvc", "owned-pvc")
		return err != nil && strings.Contains(out, "NotFound")
	})
	if n := len(cnsVolume("pvc-" + ownedUID)); n != 0 {
		t.Errorf("CNS volumes of the collected owned-pvc: %d, want none", n)
	}
}
