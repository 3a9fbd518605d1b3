package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vmware/govmomi/cns"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// seedVMWithVolume is the seed's Adding Managed Volumes step 2, verbatim.
const seedVMWithVolume = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: my-vm
  namespace: my-namespace
spec:
  className:    my-vm-class
  imageName:    vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
  volumes:
  - name: my-disk-1
    persistentVolumeClaim:
      claimName: my-pvc
`

// seedExplicitPlacement is the seed's "more control over placement" volume.
const seedExplicitPlacement = `
  - name: my-disk-1
    persistentVolumeClaim:
      claimName: my-pvc
    controllerType: SCSI
    controllerBusNumber: 0
    unitNumber: 2
    diskMode: Persistent
    sharingMode: None
`

// TestSeedVolumes walks the seed's Adding and Removing Managed Volumes with kubectl: my-pvc
// (bound to a CNS volume, as the claim loop binds it) added to my-vm is attached as an
// 8 GiB disk at the next free SCSI unit before the VM powers on, status.volumes shows it
// with its disk UUID; the seed's JSON patch removes it, the disk is detached and the claim
// and its volume stay; the explicit placement puts the same file on SCSI 0 unit 2.
func TestSeedVolumes(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	cnsClient, err := cns.NewClient(t.Context(), vc.Client)
	if err != nil {
		t.Fatal(err)
	}
	volumeID := createVolumes(t, cnsClient, sharedDatastore(t, vc.Client), 1, 8<<10)[0].id
	tp.apply(fmt.Sprintf(`apiVersion: v1
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
  volumeName: %s
`, volumeID), "")
	tp.apply(seedVMWithVolume, "")
	tp.waitPower("my-vm", "PoweredOn")
	attached := func() string {
		return tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o",
			`jsonpath={.status.volumes[?(@.name=="my-disk-1")].attached} {.status.volumes[?(@.name=="my-disk-1")].diskUUID} {.status.volumes[?(@.name=="my-disk-1")].unitNumber}`)
	}
	tp.eventually("my-disk-1 attached", func() bool { return strings.HasPrefix(attached(), "true ") })
	disk := volumeDisk(t, tp.vm(vc, "my-vm"), volumeID)
	if disk == nil || disk.CapacityInBytes != 8<<30 || *disk.UnitNumber != 1 {
		t.Fatalf("my-pvc's disk in vcsim %+v, want 8 GiB on unit 1", disk)
	}
	backing := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
	if got, want := attached(), "true "+backing.Uuid+" 1"; got != want {
		t.Errorf("status of my-disk-1 %q, want %q", got, want)
	}
	if c := tp.condition("my-vm", "VirtualMachineHardwareVolumesVerified"); c != "True True" {
		t.Errorf("VirtualMachineHardwareVolumesVerified %q, want True", c)
	}

	tp.kubectl("patch", "vm", "my-vm", "-n", "my-namespace", "--type=json", `-p=[{"op": "remove", "path": "/spec/volumes/0"}]`)
	tp.eventually("my-disk-1 gone from status", func() bool { return attached() == "  " })
	if d := volumeDisk(t, tp.vm(vc, "my-vm"), volumeID); d != nil {
		t.Fatalf("my-pvc's disk still on the VM after the entry was removed: %+v", d)
	}
	if out := tp.kubectl("get", "pvc", "my-pvc", "-n", "my-namespace", "-o", "jsonpath={.spec.volumeName}"); out != volumeID {
		t.Errorf("claim's volume %q after the detach, want %s", out, volumeID)
	}

	// Applied server-side: spec.volumes is a list keyed by name, so the image disk's volume
	// the schema upgrade back-filled stays (a client-side apply replaces the list, and
	// removing that volume is forbidden).
	placement := seedVMWithVolume[:strings.Index(seedVMWithVolume, "  - name: my-disk-1")] + seedExplicitPlacement[1:]
	if out, err := tp.kubectlCtx(t.Context(), []byte(placement), "apply", "--server-side", "--force-conflicts", "-n", "my-namespace", "-f", "-"); err != nil {
		t.Fatalf("apply --server-side: %v\n%s", err, out)
	}
	tp.eventually("my-disk-1 attached on unit 2", func() bool { return strings.HasSuffix(attached(), " 2") })
	disk = volumeDisk(t, tp.vm(vc, "my-vm"), volumeID)
	if disk == nil || *disk.UnitNumber != 2 || disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo).FileName != backing.FileName {
		t.Errorf("reattached disk %+v, want the same file %s on unit 2", disk, backing.FileName)
	}
}

// volumeDisk is the VM's disk of the CNS volume (vDiskId), nil when it has none.
func volumeDisk(t *testing.T, vm *object.VirtualMachine, volumeID string) *types.VirtualDisk {
	t.Helper()
	devices, err := vm.Device(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		if disk := d.(*types.VirtualDisk); disk.VDiskId != nil && disk.VDiskId.Id == volumeID {
			return disk
		}
	}
	return nil
}
