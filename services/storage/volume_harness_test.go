package storage

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// What the claim loop does (CONTRACTS B), done by the tests themselves: a CNS volume
// named pvc-<uid>, and the claim bound to it through spec.volumeName.

func testCNS(t testing.TB) *cns.Client {
	t.Helper()
	c, err := cns.NewClient(t.Context(), vc.Client.Client)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createVolume creates a CNS block volume of size MiB on the first zone's datastore and
// returns its ID.
func createVolume(t testing.TB, name string, mib int64) string {
	t.Helper()
	ctx := t.Context()
	finder, _, err := vc.Finder(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := finder.Datastore(ctx, inventory.Zones[0].Datastore)
	if err != nil {
		t.Fatal(err)
	}
	c := testCNS(t)
	task, err := c.CreateVolume(ctx, []cnstypes.CnsVolumeCreateSpec{{
		Name:       name,
		VolumeType: string(cnstypes.CnsVolumeTypeBlock),
		Datastores: []types.ManagedObjectReference{ds.Reference()},
		Metadata:   cnstypes.CnsVolumeMetadata{ContainerCluster: cnstypes.CnsContainerCluster{ClusterType: string(cnstypes.CnsClusterTypeKubernetes), ClusterId: "vmop"}},
		BackingObjectDetails: &cnstypes.CnsBlockBackingDetails{
			CnsBackingObjectDetails: cnstypes.CnsBackingObjectDetails{CapacityInMb: mib},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := vcenter.WaitTask(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cns.GetTaskResult(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	return res.GetCnsVolumeOperationResult().VolumeId.Id
}

// testClaim is a claim a test binds to a CNS volume it created.
type testClaim struct {
	ref      events.Ref
	uid      string
	volumeID string
	access   model.PersistentVolumeAccessMode
	size     string
	class    string         // my-storage-class when empty
	deleting bool           // its deletion asked (deletionTimestamp set)
	owner    *deploytest.VM // the VM controlling it (an image disk's claim), none when nil
	seq      uint64
}

// boundClaim creates a CNS volume of size and a claim of my-namespace bound to it.
func boundClaim(t testing.TB, js jetstream.JetStream, name, size string, access model.PersistentVolumeAccessMode) *testClaim {
	t.Helper()
	c := &testClaim{ref: events.Ref{Plural: pluralClaims, Namespace: "my-namespace", Name: name}, uid: uuid.NewString(), access: access, size: size}
	c.volumeID = createVolume(t, "pvc-"+c.uid, mib(size))
	c.put(t, js)
	return c
}

func mib(size string) int64 {
	switch size {
	case "8Gi":
		return 8 << 10
	case "12Gi":
		return 12 << 10
	}
	panic("size " + size)
}

// put appends the claim's spec to SPECS.
func (c *testClaim) put(t testing.TB, js jetstream.JetStream) {
	t.Helper()
	class := c.class
	if class == "" {
		class = "my-storage-class"
	}
	body := map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": c.ref.Name, "namespace": c.ref.Namespace, "uid": c.uid},
		"spec": map[string]any{
			"accessModes": []string{string(c.access)}, "volumeMode": "Block", "storageClassName": class,
			"resources": map[string]any{"requests": map[string]any{"storage": c.size}}, "volumeName": c.volumeID,
		},
	}
	if c.deleting {
		body["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-22T00:00:00Z"
	}
	if c.owner != nil {
		body["metadata"].(map[string]any)["ownerReferences"] = []map[string]any{{
			"apiVersion": model.GroupVMOperator + "/" + model.VersionVMOperator, "kind": "VirtualMachine",
			"name": c.owner.Ref.Name, "uid": c.owner.UID, "controller": true,
		}}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if c.seq, err = events.AppendSpec(t.Context(), js, c.ref, events.OpPut, raw, c.seq, nil); err != nil {
		t.Fatal(err)
	}
}

// claimVolume is a spec.volumes entry for the claim.
func claimVolume(name, claimName string) model.VirtualMachineVolume {
	return model.VirtualMachineVolume{Name: name, PersistentVolumeClaim: &model.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}
}

// volumesVerified waits for VirtualMachineHardwareVolumesVerified to have the status.
func volumesVerified(t testing.TB, js jetstream.JetStream, v *deploytest.VM, status string) model.VirtualMachineStatus {
	t.Helper()
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "VolumesVerified "+status, func(s events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionHardwareVolumesVerified)
		return c == status && s.Generation == v.Generation()
	})
	return st
}

// disksOf are the VM's disks in vcsim by CNS volume ID (vDiskId), each list in device order.
func disksOf(t testing.TB, vm *object.VirtualMachine) map[string][]*types.VirtualDisk {
	t.Helper()
	out := map[string][]*types.VirtualDisk{}
	for _, d := range object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil)) {
		disk := d.(*types.VirtualDisk)
		if disk.VDiskId != nil {
			out[disk.VDiskId.Id] = append(out[disk.VDiskId.Id], disk)
		}
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not before the deadline", what)
		}
		time.Sleep(20 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}

func volumeStatus(st model.VirtualMachineStatus, name string) *model.VirtualMachineVolumeStatus {
	for i := range st.Volumes {
		if st.Volumes[i].Name == name {
			return &st.Volumes[i]
		}
	}
	return nil
}

func ctxTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// attachedClaim deploys a VM named vmName whose volume "data" is a bound 8Gi ReadWriteOnce
// claim named claimName, and returns them once the volume is attached.
func attachedClaim(t *testing.T, js jetstream.JetStream, claimName, vmName string) (*testClaim, *deploytest.VM, *object.VirtualMachine) {
	t.Helper()
	pvc := boundClaim(t, js, claimName, "8Gi", model.AccessModeReadWriteOnce)
	v := upgradedVM("my-namespace", vmName, vmSpec(claimVolume("data", claimName)))
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	volumesVerified(t, js, v, "True")
	return pvc, v, vm
}
