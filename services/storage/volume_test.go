package storage

import (
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// vmSpec is a VM of the seed's class and storage class with a ParaVirtual SCSI bus 0 and
// the volumes.
func vmSpec(vols ...model.VirtualMachineVolume) model.VirtualMachineSpec {
	return model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class",
		Hardware: hardware(model.SCSIControllerSpec{BusNumber: 0, Type: model.SCSIControllerTypeParaVirtual}),
		Volumes:  vols,
	}
}

// The seed's Adding Managed Volumes: my-pvc (8Gi, Block, ReadWriteOnce) added to my-vm is
// attached as an 8 GiB disk backed by its CNS volume's file at the next free SCSI unit,
// reported attached with the disk's UUID; removing the entry detaches it and keeps the
// file; adding it back attaches the same file again.
func TestAttachDetachReattach(t *testing.T) {
	js := startService(t)
	pvc := boundClaim(t, js, "my-pvc", "8Gi", model.AccessModeReadWriteOnce)
	v := upgradedVM("my-namespace", "my-vm", vmSpec(claimVolume("my-disk-1", "my-pvc")))
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	st := volumesVerified(t, js, v, "True")

	disks := disksOf(t, vm)[pvc.volumeID]
	if len(disks) != 1 {
		t.Fatalf("%d disks of volume %s in vcsim, want 1", len(disks), pvc.volumeID)
	}
	disk := disks[0]
	if disk.CapacityInBytes != 8<<30 {
		t.Errorf("disk capacity %d, want 8 GiB", disk.CapacityInBytes)
	}
	if *disk.UnitNumber != 1 {
		t.Errorf("disk on unit %d, want 1: the next free unit after the image disk", *disk.UnitNumber)
	}
	backing := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
	got := volumeStatus(st, "my-disk-1")
	if got == nil {
		t.Fatalf("no status.volumes entry my-disk-1 in %+v", st.Volumes)
	}
	if !got.Attached || got.Type != model.VolumeTypeManaged || got.DiskUUID == "" || got.DiskUUID != backing.Uuid ||
		got.ControllerType != model.ControllerTypeSCSI || *got.ControllerBusNumber != 0 || *got.UnitNumber != 1 ||
		got.Limit.Value() != 8<<30 || got.Requested.Value() != 8<<30 || got.DiskMode != model.VolumeDiskModePersistent || got.Error != "" {
		t.Errorf("status of my-disk-1 = %+v, want Managed, attached, disk UUID %s on SCSI 0:1, 8Gi, Persistent", got, backing.Uuid)
	}
	for _, vol := range st.Volumes {
		if vol.Type == model.VolumeTypeClassic && vol.DiskUUID == backing.Uuid {
			t.Errorf("the volume's disk is also reported Classic: %+v", vol)
		}
	}

	// Detach: the entry removed, the disk goes and its file stays.
	v.Spec.Volumes = nil
	v.Put(t, js, false)
	st = volumesVerified(t, js, v, "True")
	if n := len(disksOf(t, vm)[pvc.volumeID]); n != 0 {
		t.Fatalf("%d disks of the volume after its entry was removed, want 0", n)
	}
	if vol := volumeStatus(st, "my-disk-1"); vol != nil {
		t.Errorf("status still reports the removed volume: %+v", vol)
	}
	if len(st.Volumes) != 1 {
		t.Errorf("status.volumes %+v, want the image disk alone", st.Volumes)
	}

	// Reattach: the same file again, with its UUID.
	v.Spec.Volumes = []model.VirtualMachineVolume{claimVolume("my-disk-1", "my-pvc")}
	v.Put(t, js, false)
	volumesVerified(t, js, v, "True")
	again := disksOf(t, vm)[pvc.volumeID]
	if len(again) != 1 {
		t.Fatalf("%d disks of the volume after re-adding it, want 1", len(again))
	}
	if b := again[0].Backing.(*types.VirtualDiskFlatVer2BackingInfo); b.FileName != backing.FileName || b.Uuid != backing.Uuid {
		t.Errorf("reattached file %s (UUID %s), want the same %s (%s)", b.FileName, b.Uuid, backing.FileName, backing.Uuid)
	}
}

// The seed's explicit placement lands on SCSI 0 unit 2 with the modes given; its
// OracleRAC volume gets the preset: independent persistent, multi-writer, on the first
// SCSI controller without bus sharing.
func TestPlacementAndApplicationPreset(t *testing.T) {
	js := startService(t)
	data := boundClaim(t, js, "data-pvc", "8Gi", model.AccessModeReadWriteOnce)
	oracle := boundClaim(t, js, "oracle-data-pvc", "8Gi", model.AccessModeReadWriteMany)
	explicit := claimVolume("my-disk-1", "data-pvc")
	explicit.ControllerType, explicit.ControllerBusNumber, explicit.UnitNumber = model.ControllerTypeSCSI, ptr[int32](0), ptr[int32](2)
	explicit.DiskMode, explicit.SharingMode = model.VolumeDiskModePersistent, model.VolumeSharingModeNone
	rac := claimVolume("oracle-data", "oracle-data-pvc")
	rac.ApplicationType = model.VolumeApplicationTypeOracleRAC
	v := upgradedVM("my-namespace", "placed", vmSpec(explicit, rac))
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	st := volumesVerified(t, js, v, "True")

	disks := disksOf(t, vm)
	if d := disks[data.volumeID]; len(d) != 1 || *d[0].UnitNumber != 2 {
		t.Fatalf("explicitly placed disk %+v, want one on unit 2", d)
	}
	if s := volumeStatus(st, "my-disk-1"); s == nil || *s.UnitNumber != 2 || *s.ControllerBusNumber != 0 || s.ControllerType != model.ControllerTypeSCSI {
		t.Errorf("status of my-disk-1 %+v, want SCSI 0:2", s)
	}
	d := disks[oracle.volumeID]
	if len(d) != 1 {
		t.Fatalf("%d disks of the OracleRAC volume, want 1", len(d))
	}
	b := d[0].Backing.(*types.VirtualDiskFlatVer2BackingInfo)
	if b.DiskMode != string(types.VirtualDiskModeIndependent_persistent) || b.Sharing != string(types.VirtualDiskSharingSharingMultiWriter) {
		t.Errorf("OracleRAC disk mode %s sharing %s, want independent_persistent and sharingMultiWriter", b.DiskMode, b.Sharing)
	}
	if *d[0].UnitNumber != 1 {
		t.Errorf("OracleRAC disk on unit %d, want 1 (0 is the image disk, 2 the explicit volume)", *d[0].UnitNumber)
	}
	if s := volumeStatus(st, "oracle-data"); s == nil || s.DiskMode != model.VolumeDiskModeIndependentPersistent || s.SharingMode != model.VolumeSharingModeMultiWriter {
		t.Errorf("status of oracle-data %+v, want IndependentPersistent MultiWriter", s)
	}
}

// A MicrosoftWSFC volume goes to a SCSI controller with physical bus sharing: the VM has
// none, so a ParaVirtual one is added at the lowest free bus.
func TestWSFCAddsPhysicalSharingController(t *testing.T) {
	js := startService(t)
	pvc := boundClaim(t, js, "wsfc-pvc", "8Gi", model.AccessModeReadWriteOnce)
	wsfc := claimVolume("quorum", "wsfc-pvc")
	wsfc.ApplicationType = model.VolumeApplicationTypeMicrosoftWSFC
	v := upgradedVM("my-namespace", "wsfc", vmSpec(wsfc))
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	volumesVerified(t, js, v, "True")

	d := disksOf(t, vm)[pvc.volumeID]
	if len(d) != 1 {
		t.Fatalf("%d disks of the WSFC volume, want 1", len(d))
	}
	devices := object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device)
	ctrl, ok := devices.FindByKey(d[0].ControllerKey).(*types.ParaVirtualSCSIController)
	if !ok || ctrl.BusNumber != 1 || ctrl.SharedBus != types.VirtualSCSISharingPhysicalSharing {
		t.Errorf("WSFC disk's controller %+v, want a ParaVirtual SCSI bus 1 with physical sharing", devices.FindByKey(d[0].ControllerKey))
	}
	if b := d[0].Backing.(*types.VirtualDiskFlatVer2BackingInfo); b.DiskMode != string(types.VirtualDiskModeIndependent_persistent) || b.Sharing != string(types.VirtualDiskSharingSharingNone) {
		t.Errorf("WSFC disk mode %s sharing %s, want independent_persistent, sharingNone", b.DiskMode, b.Sharing)
	}
}

// A volume naming a missing claim, or an unbound one, or a ReadWriteOnce claim another VM
// has, or one another VM owns (its image disk's), is reported with the reason and nothing
// is attached for it, while a free claim
// asked for in the same change (one CNS attach with the taken one, which CNS refuses
// whole) is attached; once the claim is bound, it is attached.
func TestVolumeProblems(t *testing.T) {
	js := startService(t)
	taken := boundClaim(t, js, "taken", "8Gi", model.AccessModeReadWriteOnce)
	free := boundClaim(t, js, "free", "8Gi", model.AccessModeReadWriteOnce)
	// Its class does not exist, so the claim loop leaves it unbound until the test binds it.
	unbound := &testClaim{ref: events.Ref{Plural: pluralClaims, Namespace: "my-namespace", Name: "unbound"}, uid: "u-1", access: model.AccessModeReadWriteOnce, size: "8Gi", class: "no-such-class"}
	unbound.put(t, js)
	going := boundClaim(t, js, "going", "8Gi", model.AccessModeReadWriteOnce)
	going.deleting = true
	going.put(t, js)

	first := upgradedVM("my-namespace", "holder", vmSpec(claimVolume("data", "taken")))
	owned := boundClaim(t, js, "owned", "8Gi", model.AccessModeReadWriteOnce)
	owned.owner = first
	owned.put(t, js)
	first.Put(t, js, false)
	holderVM := first.Deploy(t, vc, js, inventory.PhotonImage)
	volumesVerified(t, js, first, "True")

	// The seed's Mapping spec.volumes to Image Disks: placement matching no image disk,
	// without a claim, asks for a new volume, which fails.
	unmapped := model.VirtualMachineVolume{Name: "no-image-disk", ControllerType: model.ControllerTypeSCSI, ControllerBusNumber: ptr[int32](0), UnitNumber: ptr[int32](5)}
	second := upgradedVM("my-namespace", "second", vmSpec(
		claimVolume("missing", "no-such-claim"), claimVolume("pending", "unbound"), claimVolume("fresh", "free"), claimVolume("shared", "taken"),
		claimVolume("deleted", "going"), claimVolume("other-vms", "owned"), unmapped))
	second.Put(t, js, false)
	secondVM := second.Deploy(t, vc, js, inventory.PhotonImage)
	st := volumesVerified(t, js, second, "False")
	for name, want := range map[string]string{
		"missing":       `PersistentVolumeClaim "no-such-claim" not found`,
		"pending":       `PersistentVolumeClaim "unbound" is not bound to a volume yet`,
		"shared":        `PersistentVolumeClaim "taken" is ReadWriteOnce and attached to VM holder`,
		"deleted":       `PersistentVolumeClaim "going" is being deleted`,
		"other-vms":     `PersistentVolumeClaim "owned" belongs to VirtualMachine holder`,
		"no-image-disk": "no disk of the image is at SCSI 0:5, and a new volume needs a persistentVolumeClaim",
	} {
		s := volumeStatus(st, name)
		if s == nil || s.Attached || s.Error != want {
			t.Errorf("status of %s = %+v, want not attached with error %q", name, s, want)
		}
	}
	if _, reason := deploytest.Condition(st, model.ConditionHardwareVolumesVerified); reason != model.ReasonHardwareVolumesMismatch {
		t.Errorf("VolumesVerified reason %s, want %s", reason, model.ReasonHardwareVolumesMismatch)
	}
	if s := volumeStatus(st, "fresh"); s == nil || !s.Attached || s.Error != "" {
		t.Errorf("status of fresh = %+v, want attached", s)
	}
	if d := disksOf(t, secondVM); len(d) != 1 || len(d[free.volumeID]) != 1 {
		t.Errorf("the second VM has CNS disks %v, want one, of the free claim's volume", d)
	}
	if d := disksOf(t, holderVM)[taken.volumeID]; len(d) != 1 {
		t.Errorf("the holder has %d disks of its volume, want 1", len(d))
	}

	// Bound now: the claim's change brings the VM back, and the volume is attached.
	unbound.volumeID = createVolume(t, "pvc-"+unbound.uid, mib("8Gi"))
	unbound.put(t, js)
	waitFor(t, "the bound claim's disk on the second VM", func() bool { return len(disksOf(t, secondVM)[unbound.volumeID]) == 1 })
}

// A claim that can no longer be read while its volume is still in the spec (the claim
// deleted from the store behind pvc-protection's back) keeps the disk attached: the entry
// is reported attached with the error, and nothing is detached.
func TestUnreadableClaimKeepsItsDisk(t *testing.T) {
	js := startService(t)
	pvc, v, vm := attachedClaim(t, js, "kept-pvc", "keeps")

	if _, err := events.AppendSpec(t.Context(), js, pvc.ref, events.OpDelete, nil, pvc.seq, nil); err != nil {
		t.Fatal(err)
	}
	v.Put(t, js, false)
	st := volumesVerified(t, js, v, "False")
	if s := volumeStatus(st, "data"); s == nil || !s.Attached || s.Error != `PersistentVolumeClaim "kept-pvc" not found` {
		t.Errorf("status of data %+v, want attached with the claim's error", s)
	}
	if d := disksOf(t, vm)[pvc.volumeID]; len(d) != 1 {
		t.Errorf("%d disks of the volume, want it kept attached", len(d))
	}
}

// A ReadWriteMany claim attached multi-writer (OracleRAC) is shared: two VMs both get its
// disk, each once.
func TestMultiWriterClaimIsShared(t *testing.T) {
	js := startService(t)
	pvc := boundClaim(t, js, "rac-shared", "8Gi", model.AccessModeReadWriteMany)
	rac := claimVolume("oracle-data", "rac-shared")
	rac.ApplicationType = model.VolumeApplicationTypeOracleRAC
	var vms []*object.VirtualMachine
	for _, name := range []string{"rac-1", "rac-2"} {
		v := upgradedVM("my-namespace", name, vmSpec(rac))
		v.Put(t, js, false)
		vms = append(vms, v.Deploy(t, vc, js, inventory.PhotonImage))
		volumesVerified(t, js, v, "True")
	}
	for i, vm := range vms {
		if d := disksOf(t, vm)[pvc.volumeID]; len(d) != 1 {
			t.Errorf("rac-%d has %d disks of the shared volume, want 1", i+1, len(d))
		}
	}
}

// A volume that takes the unit of one removed in the same update is attached at once, not
// at the next resync: the pass that removes the old disk cannot place the new one yet, and
// the one it asks for next can. Both ways the seed's users replace a volume: a new entry at
// the old one's unit, and an entry naming another claim.
func TestReplacedVolumeTakesTheFreedUnit(t *testing.T) {
	js := startService(t)
	old, v, vm := attachedClaim(t, js, "replaced-pvc", "replaced")
	atUnitOne := func(name, claim string) model.VirtualMachineVolume {
		vol := claimVolume(name, claim)
		vol.ControllerType, vol.ControllerBusNumber, vol.UnitNumber = model.ControllerTypeSCSI, ptr[int32](0), ptr[int32](1)
		return vol
	}
	replace := func(by model.VirtualMachineVolume, pvc *testClaim, gone *testClaim) {
		t.Helper()
		v.Spec.Volumes = []model.VirtualMachineVolume{by}
		v.Put(t, js, false)
		st := volumesVerified(t, js, v, "True")
		disks := disksOf(t, vm)
		if d := disks[pvc.volumeID]; len(d) != 1 || *d[0].UnitNumber != 1 {
			t.Fatalf("disks of %s's volume %+v, want one on unit 1", by.Name, d)
		}
		if n := len(disks[gone.volumeID]); n != 0 {
			t.Errorf("%d disks of the replaced volume, want 0", n)
		}
		if s := volumeStatus(st, by.Name); s == nil || !s.Attached || s.Error != "" {
			t.Errorf("status of %s: %+v, want attached", by.Name, s)
		}
	}

	logs := boundClaim(t, js, "logs-pvc", "8Gi", model.AccessModeReadWriteOnce)
	replace(atUnitOne("logs", "logs-pvc"), logs, old)

	other := boundClaim(t, js, "other-logs-pvc", "8Gi", model.AccessModeReadWriteOnce)
	replace(atUnitOne("logs", "other-logs-pvc"), other, logs)
}
