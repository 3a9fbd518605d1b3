package storage

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vslm"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// The multi-disk image's two disks end up in spec.volumes as disk-<uuid> claims, each
// bound to a CNS volume backed by the disk's own file, owned and labelled by the VM, with
// a CnsRegisterVolume that reports done; the upgrade annotations are stamped and the
// conditions True. Reconciling again makes nothing twice; deleting the VM marks its claims
// and CnsRegisterVolumes deleted and leaves a claim of the same namespace it does not own.
func TestImageDisksBecomeClaims(t *testing.T) {
	js := startService(t)
	v, vcVM, st := registeredMultiDiskVM(t, js, "two-disk-claims")
	if c, _ := deploytest.Condition(st, model.ConditionUnmanagedVolumesBackfilled); c != "True" {
		t.Errorf("Backfilled %q, want True", c)
	}

	// Every disk of the VM in vcsim, by its UUID.
	files, stores := map[string]string{}, map[string]types.ManagedObjectReference{}
	for _, d := range object.VirtualDeviceList(readTestVM(t, vcVM).Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil)) {
		b := d.(*types.VirtualDisk).Backing.(*types.VirtualDiskFlatVer2BackingInfo)
		files["disk-"+strings.ToLower(b.Uuid)] = b.FileName
		stores["disk-"+strings.ToLower(b.Uuid)] = *b.Datastore
	}
	if len(files) != 2 {
		t.Fatalf("%d disks in vcsim, want the image's 2", len(files))
	}

	vm := storedVM(t, js, v)
	for k, want := range model.UpgradedTo(model.BuildVersion) {
		if got := vm.Annotations[k]; got != want {
			t.Errorf("annotation %s = %q, want %q", k, got, want)
		}
	}
	if len(vm.Spec.Volumes) != 2 {
		t.Fatalf("spec.volumes %+v, want the 2 image disks", vm.Spec.Volumes)
	}
	// The back-fill and the registration were one write: the record before lacks both.
	last, err := events.LastSpec(t.Context(), js, v.Ref)
	if err != nil {
		t.Fatal(err)
	}
	prevSeq, err := strconv.ParseUint(last.Header.Get(jetstream.ExpectedLastSubjSeqHeader), 10, 64)
	if err != nil {
		t.Fatalf("the last record names no previous one: %v", err)
	}
	prevRec, err := events.SpecAt(t.Context(), js, v.Ref, prevSeq)
	if err != nil {
		t.Fatal(err)
	}
	var prev model.VirtualMachine
	if err := json.Unmarshal(prevRec.Body, &prev); err != nil {
		t.Fatal(err)
	}
	if len(prev.Spec.Volumes) != 0 {
		t.Errorf("the record before the registration's has spec.volumes %+v: the back-fill was a write of its own", prev.Spec.Volumes)
	}
	cnsClient, err := cns.NewClient(t.Context(), vc.Client.Client)
	if err != nil {
		t.Fatal(err)
	}
	for i, vol := range vm.Spec.Volumes {
		file, ok := files[vol.Name]
		if !ok || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != vol.Name {
			t.Fatalf("volume %+v: want a disk-<uuid> entry naming its own claim", vol)
		}
		if vol.ControllerType != model.ControllerTypeSCSI || *vol.ControllerBusNumber != 0 || *vol.UnitNumber != int32(i) || *vol.Removable {
			t.Errorf("volume %s placed %s %d:%d removable %v, want SCSI 0:%d not removable", vol.Name, vol.ControllerType, *vol.ControllerBusNumber, *vol.UnitNumber, *vol.Removable, i)
		}
		claim := readObject[model.PersistentVolumeClaim](t, js, pluralClaims, vol.Name)
		if claim.Labels[labelVMName] != v.Ref.Name || len(claim.OwnerReferences) != 1 || string(claim.OwnerReferences[0].UID) != v.UID {
			t.Errorf("claim %s: labels %v owners %v, want the VM's", vol.Name, claim.Labels, claim.OwnerReferences)
		}
		if claim.Annotations[annotationDiskBacking] != string(cnstypes.CnsVolumeBackingTypeFlatVer2BackingInfo) || claim.UID == "" || claim.CreationTimestamp.IsZero() {
			t.Errorf("claim %s metadata %+v", vol.Name, claim.ObjectMeta)
		}
		if claim.Spec.VolumeMode != model.VolumeModeBlock {
			t.Errorf("claim %s volumeMode %q, want Block (the seed's Volume Modes, shared disks supported)", vol.Name, claim.Spec.VolumeMode)
		}
		found, err := cnsClient.QueryVolume(t.Context(), &cnstypes.CnsQueryFilter{Names: []string{vol.Name}})
		if err != nil || len(found.Volumes) != 1 {
			t.Fatalf("CNS volumes named %s: %v (%v), want one", vol.Name, found, err)
		}
		cv := found.Volumes[0]
		request := claim.Spec.Resources.Requests["storage"]
		if mb := cv.BackingObjectDetails.GetCnsBackingObjectDetails().CapacityInMb; mb<<20 != request.Value() || mb == 0 {
			t.Errorf("CNS volume %s of %d MiB, claim requests %s", vol.Name, mb, request.String())
		}
		if claim.Spec.VolumeName != cv.VolumeId.Id {
			t.Errorf("claim %s bound to %q, want CNS volume %s", vol.Name, claim.Spec.VolumeName, cv.VolumeId.Id)
		}
		// CNS's SOAP answer loses the block backing's path: the first-class disk has it.
		fcd, err := vslm.NewObjectManager(vc.Client.Client).Retrieve(t.Context(), stores[vol.Name], cv.VolumeId.Id)
		if err != nil {
			t.Fatalf("first-class disk %s: %v", cv.VolumeId.Id, err)
		}
		if got := fcd.Config.Backing.(*types.BaseConfigInfoDiskFileBackingInfo).FilePath; got != file {
			t.Errorf("CNS volume %s backed by %q, want the VM's disk %q in place", vol.Name, got, file)
		}
		phase := readSlice[model.PersistentVolumeClaimStatus](t, js, pluralClaims, vol.Name).Phase
		if phase != "Bound" {
			t.Errorf("claim %s phase %q, want Bound", vol.Name, phase)
		}
		crv := readObject[model.CnsRegisterVolume](t, js, pluralRegistered, vol.Name)
		if crv.Spec.PvcName != vol.Name || !strings.HasSuffix(crv.Spec.DiskURLPath, strings.SplitN(file, "] ", 2)[1]) || string(crv.OwnerReferences[0].UID) != v.UID {
			t.Errorf("CnsRegisterVolume %s: %+v", vol.Name, crv)
		}
		if !readSlice[model.CnsRegisterVolumeStatus](t, js, pluralRegistered, vol.Name).Registered {
			t.Errorf("CnsRegisterVolume %s not registered", vol.Name)
		}
	}

	// Once more, as after a redelivery: nothing is made twice, the record stays.
	seq := lastSeq(t, js, v.Ref)
	v.Sync(t, js)
	v.Put(t, js, false)
	next := v.Generation()
	_, st = v.WaitStatus(t, js, model.ServiceStorage, "the next generation reconciled", func(s events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionUnmanagedVolumesRegistered)
		return s.Generation == next && c == "True"
	})
	if got := lastSeq(t, js, v.Ref); got != seq+1 {
		t.Errorf("the VM's record moved from %d to %d: the upgraded VM was written again", seq, got)
	}
	// Registered, the image disks are still Classic in status.volumes (seed, Volume Type
	// in Status), each once, under the name of its spec.volumes entry.
	if len(st.Volumes) != len(files) {
		t.Errorf("status.volumes %+v, want one entry per image disk", st.Volumes)
	}
	for _, got := range st.Volumes {
		if _, ok := files[got.Name]; !ok || got.Type != model.VolumeTypeClassic || !got.Attached || got.Name != "disk-"+strings.ToLower(got.DiskUUID) {
			t.Errorf("status.volumes entry %+v, want an attached Classic disk-<uuid> entry of an image disk", got)
		}
	}
	// Their claims charge them now (quota counts claims), so status.storage does not.
	if st.Storage == nil || st.Storage.Requested == nil || !st.Storage.Requested.Disks.IsZero() {
		t.Errorf("status.storage %+v, want no disks requested: the registered disks are their claims'", st.Storage)
	}
	all, err := cnsClient.QueryVolume(t.Context(), &cnstypes.CnsQueryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cv := range all.Volumes {
		if _, ok := files[cv.Name]; ok {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d CNS volumes for the VM's disks, want 2", n)
	}

	// A claim of the namespace that the VM does not own stays when the VM goes.
	other := events.Ref{Plural: pluralClaims, Namespace: "my-namespace", Name: "not-the-vms"}
	if err := deploytest.PutObject(t.Context(), js, other, map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": other.Name, "namespace": other.Namespace, "uid": "u-other"},
	}); err != nil {
		t.Fatal(err)
	}
	v.Sync(t, js)
	v.Put(t, js, true)
	v.WaitStatus(t, js, model.ServiceStorage, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	for _, vol := range vm.Spec.Volumes {
		for _, plural := range []string{pluralClaims, pluralRegistered} {
			if !deletionAsked(t, js, events.Ref{Plural: plural, Namespace: "my-namespace", Name: vol.Name}) {
				t.Errorf("%s %s not deleted with its VM", plural, vol.Name)
			}
		}
	}
	if deletionAsked(t, js, other) {
		t.Error("a claim the VM does not own was deleted with it")
	}
}

// registeredMultiDiskVM deploys a VM named name from the multi-disk image and waits until
// its image disks are registered, returning its status then.
func registeredMultiDiskVM(t *testing.T, js jetstream.JetStream, name string) (*deploytest.VM, *object.VirtualMachine, model.VirtualMachineStatus) {
	t.Helper()
	v := deploytest.NewVM("my-namespace", name, model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class",
		Hardware: hardware(model.SCSIControllerSpec{BusNumber: 0, Type: model.SCSIControllerTypeParaVirtual}),
	})
	v.Put(t, js, false)
	vcVM := v.Deploy(t, vc, js, inventory.MultiDiskImage)
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "the image disks registered", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionUnmanagedVolumesRegistered)
		return c == "True"
	})
	return v, vcVM, st
}

func storedVM(t *testing.T, js jetstream.JetStream, v *deploytest.VM) model.VirtualMachine {
	t.Helper()
	var vm model.VirtualMachine
	decodeLast(t, js, v.Ref, &vm)
	return vm
}

// readObject decodes the newest record of my-namespace's object.
func readObject[T any](t *testing.T, js jetstream.JetStream, plural, name string) T {
	t.Helper()
	var out T
	decodeLast(t, js, events.Ref{Plural: plural, Namespace: "my-namespace", Name: name}, &out)
	return out
}

// readSlice decodes storage's status slice of my-namespace's object.
func readSlice[T any](t *testing.T, js jetstream.JetStream, plural, name string) T {
	t.Helper()
	var out T
	rec, err := events.LastStatus(t.Context(), js, events.Ref{Plural: plural, Namespace: "my-namespace", Name: name}, model.ServiceStorage)
	if err != nil {
		t.Fatalf("status of %s %s: %v", plural, name, err)
	}
	if err := json.Unmarshal(rec.Slice.Status, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeLast(t *testing.T, js jetstream.JetStream, ref events.Ref, out any) {
	t.Helper()
	rec, err := events.LastSpec(t.Context(), js, ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rec.Body, out); err != nil {
		t.Fatal(err)
	}
}

// deletionAsked reports whether the newest record of ref has a deletionTimestamp.
func deletionAsked(t *testing.T, js jetstream.JetStream, ref events.Ref) bool {
	t.Helper()
	var head struct {
		Metadata struct{ DeletionTimestamp string } `json:"metadata"`
	}
	decodeLast(t, js, ref, &head)
	return head.Metadata.DeletionTimestamp != ""
}

func lastSeq(t *testing.T, js jetstream.JetStream, ref events.Ref) uint64 {
	t.Helper()
	rec, err := events.LastSpec(t.Context(), js, ref)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Seq
}

// Pre-mapped entries keep their names and claim names (seed, Mapping spec.volumes to Image
// Disks), and a registration interrupted after RegisterDisk (the disk is a first-class
// disk already, which RegisterDisk then refuses) finishes with that same disk: one
// first-class disk and one CNS volume per file.
func TestPreMappedAndInterruptedRegistration(t *testing.T) {
	js := startService(t)
	// A name of its own each run: the first-class disks registered from its files outlive the VM.
	v := imageDiskVM("pre-mapped-"+uuid.NewString()[:8], nil, atSCSI0("os-disk", 0, "my-os-pvc"), atSCSI0("data-disk", 1, ""))
	v.Put(t, js, false)
	vcVM, err := vc.Deploy(t.Context(), inventory.MultiDiskImage, v.Ref.Name, v.Spec.InstanceUUID, v.Ref, v.UID)
	if err != nil {
		t.Fatal(err)
	}
	deploytest.AfterServices(t, func() {
		if err := deploytest.Destroy(context.Background(), vcVM); err != nil {
			t.Error(err)
		}
	})
	disks := imageDisks(object.VirtualDeviceList(readTestVM(t, vcVM).Config.Hardware.Device))
	r := &registrar{js: js, vc: vc.Client}
	loc, err := r.locate(t.Context(), disks[0])
	if err != nil {
		t.Fatal(err)
	}
	fcds := vslm.NewObjectManager(vc.Client.Client)
	if _, err := fcds.RegisterDisk(t.Context(), loc.registerURL, "interrupted"); err != nil {
		t.Fatal(err)
	}
	if err := deploytest.MarkCreated(t.Context(), js, v.Ref, v.UID, 1); err != nil {
		t.Fatal(err)
	}
	v.WaitStatus(t, js, model.ServiceStorage, "the image disks registered", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionUnmanagedVolumesRegistered)
		return c == "True"
	})

	vm := storedVM(t, js, v)
	var got []string
	for _, vol := range vm.Spec.Volumes {
		got = append(got, vol.Name+"="+claimName(vol))
	}
	if want := []string{"os-disk=my-os-pvc", "data-disk=data-disk"}; !slices.Equal(got, want) {
		t.Errorf("volumes %v, want %v", got, want)
	}
	for _, claim := range []string{"my-os-pvc", "data-disk"} {
		if c := readObject[model.PersistentVolumeClaim](t, js, pluralClaims, claim); c.Spec.VolumeName == "" || *c.Spec.StorageClassName != "my-storage-class" {
			t.Errorf("claim %s: %+v, want bound with the VM's storage class", claim, c.Spec)
		}
	}
	ids, err := fcds.List(t.Context(), disks[0].datastore)
	if err != nil {
		t.Fatal(err)
	}
	perFile := map[string]int{}
	for _, id := range ids {
		o, err := fcds.Retrieve(t.Context(), disks[0].datastore, id.Id)
		if err != nil {
			continue // another test's, whose VM and files are gone
		}
		perFile[o.Config.Backing.(*types.BaseConfigInfoDiskFileBackingInfo).FilePath]++
	}
	cnsClient, err := cns.NewClient(t.Context(), vc.Client.Client)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range disks {
		if perFile[d.backing.FileName] != 1 {
			t.Errorf("%d first-class disks for %s, want 1", perFile[d.backing.FileName], d.backing.FileName)
		}
		found, err := cnsClient.QueryVolume(t.Context(), &cnstypes.CnsQueryFilter{Names: []string{d.name()}})
		if err != nil || len(found.Volumes) != 1 {
			t.Errorf("CNS volumes named %s: %d (%v), want 1", d.name(), len(found.Volumes), err)
		}
	}
}

// A linked-clone disk (its backing has a parent) is promoted before it is registered
// (seed, Linked Clone Promotion): DiskPromotionSynced goes True, the disk has no parent
// any more in vcsim, and it becomes a claim like the others.
func TestLinkedCloneIsPromotedFirst(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "linked", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class",
		Hardware: hardware(model.SCSIControllerSpec{BusNumber: 0, Type: model.SCSIControllerTypeParaVirtual}),
	})
	v.Put(t, js, false)
	vcVM, err := vc.Deploy(t.Context(), inventory.PhotonImage, v.Ref.Name, v.Spec.InstanceUUID, v.Ref, v.UID)
	if err != nil {
		t.Fatal(err)
	}
	deploytest.AfterServices(t, func() {
		if err := deploytest.Destroy(context.Background(), vcVM); err != nil {
			t.Error(err)
		}
	})
	devices := object.VirtualDeviceList(readTestVM(t, vcVM).Config.Hardware.Device)
	base := devices.SelectByType((*types.VirtualDisk)(nil))[0].(*types.VirtualDisk)
	// The clone's parent: a small disk of its own (vcsim takes 1 ms per MB to promote).
	_, dc, err := vc.Finder(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	baseBacking := &types.VirtualDiskFlatVer2BackingInfo{
		VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{
			FileName:  strings.Replace(base.Backing.(*types.VirtualDiskFlatVer2BackingInfo).FileName, ".vmdk", "-parent.vmdk", 1),
			Datastore: base.Backing.(*types.VirtualDiskFlatVer2BackingInfo).Datastore,
		},
		DiskMode: string(types.VirtualDiskModePersistent),
	}
	task, err := object.NewVirtualDiskManager(vc.Client.Client).CreateVirtualDisk(t.Context(), baseBacking.FileName, dc, &types.FileBackedVirtualDiskSpec{
		VirtualDiskSpec: types.VirtualDiskSpec{DiskType: string(types.VirtualDiskTypeThin), AdapterType: string(types.VirtualDiskAdapterTypeLsiLogic)},
		CapacityKb:      1 << 20,
	})
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
	child := &types.VirtualDisk{
		VirtualDevice: types.VirtualDevice{
			Key: -1, ControllerKey: base.ControllerKey, UnitNumber: ptr[int32](1),
			Backing: &types.VirtualDiskFlatVer2BackingInfo{
				VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: "", Datastore: baseBacking.Datastore},
				DiskMode:                     string(types.VirtualDiskModePersistent),
				Parent:                       baseBacking,
			},
		},
		CapacityInBytes: 1 << 30,
	}
	task, err = vcVM.Reconfigure(t.Context(), types.VirtualMachineConfigSpec{DeviceChange: []types.BaseVirtualDeviceConfigSpec{
		&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, FileOperation: types.VirtualDeviceConfigSpecFileOperationCreate, Device: child},
	}})
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
	if linked := linkedDisks(t, vcVM); linked != 1 {
		t.Fatalf("%d linked-clone disks after adding one, want 1", linked)
	}
	if err := deploytest.MarkCreated(t.Context(), js, v.Ref, v.UID, 1); err != nil {
		t.Fatal(err)
	}
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "the image disks registered", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionUnmanagedVolumesRegistered)
		return c == "True"
	})
	if c, _ := deploytest.Condition(st, model.ConditionDiskPromotionSynced); c != "True" {
		t.Errorf("DiskPromotionSynced %q, want True", c)
	}
	if linked := linkedDisks(t, vcVM); linked != 0 {
		t.Errorf("%d linked-clone disks after the registration, want none", linked)
	}
	vm := storedVM(t, js, v)
	if len(vm.Spec.Volumes) != 2 {
		t.Fatalf("spec.volumes %+v, want both disks", vm.Spec.Volumes)
	}
	for _, vol := range vm.Spec.Volumes {
		if c := readObject[model.PersistentVolumeClaim](t, js, pluralClaims, claimName(vol)); c.Spec.VolumeName == "" {
			t.Errorf("claim %s not bound", claimName(vol))
		}
	}
}

// linkedDisks counts the VM's disks whose backing has a parent.
func linkedDisks(t *testing.T, vm *object.VirtualMachine) int {
	t.Helper()
	n := 0
	for _, d := range object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil)) {
		if d.(*types.VirtualDisk).Backing.(*types.VirtualDiskFlatVer2BackingInfo).Parent != nil {
			n++
		}
	}
	return n
}

// upgradedVM is a VM whose schema upgrade is done already: the tests of attaching claims
// keep its image disk as it came, outside spec.volumes.
func upgradedVM(namespace, name string, spec model.VirtualMachineSpec) *deploytest.VM {
	v := deploytest.NewVM(namespace, name, spec)
	v.Annotations = model.UpgradedTo(model.BuildVersion)
	return v
}
