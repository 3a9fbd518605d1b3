package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	vmopvc "github.com/vmop/vmop/pkg/vcenter"
)

var (
	benchClaims    = flag.Int("claims", 40, "claims attached and detached per round of BenchmarkVolumes")
	benchPerVolume = flag.Bool("per-volume", false, "BenchmarkVolumes changes one volume at a time on both paths, not all of a VM's at once")
)

const claimsPath = "/api/v1/namespaces/" + benchNamespace + "/persistentvolumeclaims"

// BenchmarkVolumes measures attaching and detaching claims through the API against the
// same vCenter work done directly. Each path has benchConcurrency powered-on VMs (the
// API's from the seed's vm-example, the direct path's deployed with govmomi) and -claims
// CNS volumes of 1 GiB on the shared datastore, dealt to the VMs; the VMs go at once, as
// BenchmarkPipeline sends its VMs. A phase ends through the API when every VM's status
// shows every volume attached (then none), seen through a watch, and directly when the
// last task is done. Setup (VMs, volumes, claims) is not timed.
//
// By default each VM gets all its volumes in one change, as a user adds a VM's volumes in
// one apply: through the API one JSON patch setting spec.volumes (then one removing it);
// directly, as a competent govmomi program does it, one CNS attach of all the VM's volumes
// and one reconfigure adding a disk backed by each volume's file (then one CNS detach and
// one reconfigure removing them), which is also what the storage service does for the
// change. With -per-volume both sides go one volume at a time: one JSON patch adding (then
// removing) one spec.volumes entry, against one CNS attach and one reconfigure per volume.
//
// Each path's CPU per volume is the process's (vcsim's included) over its phases; work the
// API path leaves running when its detach phase ends is counted against the direct path.
func BenchmarkVolumes(b *testing.B) {
	n := *benchClaims
	st := startBenchStack(b)
	direct := connectDirect(b, st.vcenter)
	cnsClient, err := cns.NewClient(context.Background(), direct.c.Client)
	if err != nil {
		b.Fatal(err)
	}
	ds := sharedDatastore(b, direct.c.Client)
	apiVMs := st.poweredOnVMs(b, "vols", benchConcurrency)
	directVMs := make([]*object.VirtualMachine, benchConcurrency)
	for i := range directVMs {
		if directVMs[i], err = direct.createAndPowerOn(context.Background(), fmt.Sprintf("vols-direct-%d", i), direct.zones[i%len(direct.zones)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var api, raw volumeRound
	for i := range b.N {
		b.StopTimer()
		apiVols := createVolumes(b, cnsClient, ds, n, 1024)
		directVols := createVolumes(b, cnsClient, ds, n, 1024)
		claims := st.bindClaims(b, fmt.Sprintf("bench-%d", i), apiVols)
		b.StartTimer()
		api.add(st.attachRound(b, apiVMs, claims, !*benchPerVolume))
		raw.add(directRound(b, cnsClient, directVMs, directVols, !*benchPerVolume))
	}
	b.StopTimer()

	attachRatio := api.attachRate() / raw.attachRate()
	detachRatio := api.detachRate() / raw.detachRate()
	b.ReportMetric(api.attachRate(), "api-attach/s")
	b.ReportMetric(raw.attachRate(), "direct-attach/s")
	b.ReportMetric(attachRatio, "attach-ratio")
	b.ReportMetric(api.detachRate(), "api-detach/s")
	b.ReportMetric(raw.detachRate(), "direct-detach/s")
	b.ReportMetric(detachRatio, "detach-ratio")
	patchMS := ms(api.patches) / float64(api.nPatches)
	b.ReportMetric(patchMS, "api-patch-ms")
	b.ReportMetric(cpuPerVM(api.attachCPU+api.detachCPU, 2*api.n), "api-cpu-ms/volume")
	b.ReportMetric(cpuPerVM(raw.attachCPU+raw.detachCPU, 2*raw.n), "direct-cpu-ms/volume")
	mode := "each VM's volumes in one change"
	if *benchPerVolume {
		mode = "one volume a change"
	}
	b.Logf("%d claims a round on %d VMs at once (%s), %d rounds; the API answered a patch in %.0f ms on average\n"+
		"  attach: API %6.1f/s (%v)   direct %6.1f/s (%v)   API/direct %.2f\n"+
		"  detach: API %6.1f/s (%v)   direct %6.1f/s (%v)   API/direct %.2f\n"+
		"  CPU per volume attached or detached: API %.2f ms   direct %.2f ms   API/direct %.1f",
		n, benchConcurrency, mode, b.N, patchMS,
		api.attachRate(), api.attach.Round(time.Millisecond), raw.attachRate(), raw.attach.Round(time.Millisecond), attachRatio,
		api.detachRate(), api.detach.Round(time.Millisecond), raw.detachRate(), raw.detach.Round(time.Millisecond), detachRatio,
		cpuPerVM(api.attachCPU+api.detachCPU, 2*api.n), cpuPerVM(raw.attachCPU+raw.detachCPU, 2*raw.n),
		float64(api.attachCPU+api.detachCPU)/float64(raw.attachCPU+raw.detachCPU))
}

// volumeRound is what one path measured for n volumes, or the sum of several rounds.
type volumeRound struct {
	n              int
	attach, detach time.Duration
	// attachCPU and detachCPU are the process's CPU time over each phase: the stack's and
	// vcsim's together, as they share the process.
	attachCPU, detachCPU time.Duration
	// patches is the time the API took to answer the nPatches JSON patches, summed (API
	// path only): the part of the API path's time spent before the storage service sees a
	// change.
	patches  time.Duration
	nPatches int
}

func (r *volumeRound) add(o volumeRound) {
	r.n += o.n
	r.attach += o.attach
	r.detach += o.detach
	r.attachCPU += o.attachCPU
	r.detachCPU += o.detachCPU
	r.patches += o.patches
	r.nPatches += o.nPatches
}

func (r volumeRound) attachRate() float64 { return float64(r.n) / r.attach.Seconds() }
func (r volumeRound) detachRate() float64 { return float64(r.n) / r.detach.Seconds() }

// benchVolume is a CNS volume and its disk file.
type benchVolume struct {
	id, path, claim string
}

func sharedDatastore(b testing.TB, c *vim25.Client) types.ManagedObjectReference {
	b.Helper()
	finder := find.NewFinder(c)
	dc, err := finder.Datacenter(context.Background(), inventory.Datacenter)
	if err != nil {
		b.Fatal(err)
	}
	finder.SetDatacenter(dc)
	ds, err := finder.Datastore(context.Background(), inventory.SharedDatastore)
	if err != nil {
		b.Fatal(err)
	}
	return ds.Reference()
}

// createVolumes creates n CNS block volumes of mib MiB on the datastore, as the claim loop
// does.
func createVolumes(b testing.TB, c *cns.Client, ds types.ManagedObjectReference, n int, mib int64) []benchVolume {
	b.Helper()
	ctx := context.Background()
	out := make([]benchVolume, n)
	for i := range out {
		task, err := c.CreateVolume(ctx, []cnstypes.CnsVolumeCreateSpec{{
			Name: fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i), VolumeType: string(cnstypes.CnsVolumeTypeBlock),
			Datastores: []types.ManagedObjectReference{ds},
			Metadata:   cnstypes.CnsVolumeMetadata{ContainerCluster: cnstypes.CnsContainerCluster{ClusterType: string(cnstypes.CnsClusterTypeKubernetes), ClusterId: "vmop"}},
			BackingObjectDetails: &cnstypes.CnsBlockBackingDetails{
				CnsBackingObjectDetails: cnstypes.CnsBackingObjectDetails{CapacityInMb: mib},
			},
		}})
		if err != nil {
			b.Fatal(err)
		}
		info, err := vmopvc.WaitTask(ctx, task)
		if err != nil {
			b.Fatal(err)
		}
		res, err := cns.GetTaskResult(ctx, info)
		if err != nil {
			b.Fatal(err)
		}
		out[i].id = res.GetCnsVolumeOperationResult().VolumeId.Id
		// vcsim keeps a CNS volume's first-class disk in fcd/<id>.vmdk (a client of a real
		// vCenter reads it from the volume's backing details).
		out[i].path = fmt.Sprintf("[%s] fcd/%s.vmdk", inventory.SharedDatastore, out[i].id)
	}
	return out
}

// bindClaims creates a claim bound to each volume through the API (as the admin may) and
// waits until the storage service reports every one Bound: binding is setup, and the
// claims' reconciles would otherwise compete with the timed round.
func (st *benchStack) bindClaims(b *testing.B, prefix string, vols []benchVolume) []benchVolume {
	b.Helper()
	for i := range vols {
		vols[i].claim = fmt.Sprintf("%s-%04d", prefix, i)
		body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":%q},
			"spec":{"accessModes":["ReadWriteOnce"],"volumeMode":"Block","storageClassName":"my-storage-class",
			"resources":{"requests":{"storage":"1Gi"}},"volumeName":%q}}`, vols[i].claim, vols[i].id)
		if code, resp, err := st.api.do("POST", claimsPath, body); err != nil || code != http.StatusCreated {
			b.Fatalf("create claim %s: %d %s %v", vols[i].claim, code, resp, err)
		}
	}
	waitFor(b, *benchTimeout, fmt.Sprintf("the %d claims %s-* Bound", len(vols), prefix), func() bool {
		return st.boundClaims(b, prefix+"-") == len(vols)
	})
	return vols
}

// boundClaims counts the claims whose name starts with prefix that are Bound.
func (st *benchStack) boundClaims(b *testing.B, prefix string) int {
	code, body, err := st.api.do("GET", claimsPath, nil)
	if err != nil || code != http.StatusOK {
		b.Fatalf("list claims: %d %s %v", code, body, err)
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, c := range list.Items {
		if strings.HasPrefix(c.Metadata.Name, prefix) && c.Status.Phase == "Bound" {
			n++
		}
	}
	return n
}

// poweredOnVMs creates n of the seed's vm-example through the API and waits until all run.
func (st *benchStack) poweredOnVMs(b *testing.B, prefix string, n int) []string {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newVMWatch(prefix)
	go w.follow(ctx, st.api, "0")
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
		if code, body, err := st.api.do("POST", vmsPath, benchVM(names[i])); err != nil || code != http.StatusCreated {
			b.Fatalf("create %s: %d %s %v", names[i], code, body, err)
		}
	}
	w.waitAll(b, "PoweredOn", names, func(v *watchedVM) time.Time { return v.on }, st.api)
	return names
}

// attachRound attaches the claims to the VMs through the API: each VM is sent its share in
// one patch (batch) or one patch after the other, the VMs at once, and the round ends when
// every VM reports every volume attached; then it detaches them the same way.
func (st *benchStack) attachRound(b *testing.B, vms []string, claims []benchVolume, batch bool) volumeRound {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &volumeWatch{attached: map[string]bool{}, changed: make(chan struct{})}
	go w.follow(ctx, st.api)
	share := split(claims, len(vms))
	r := volumeRound{n: len(claims)}
	adds, removes := make([][][]byte, len(vms)), make([][][]byte, len(vms))
	for i, vm := range vms {
		adds[i], removes[i] = volumePatches(share[i], st.volumesOf(b, vm), batch)
	}
	var mu sync.Mutex
	patch := func(vm string, body []byte) error {
		start := time.Now()
		err := st.patchVM(vm, body)
		mu.Lock()
		r.patches += time.Since(start)
		r.nPatches++
		mu.Unlock()
		return err
	}
	started, cpu := time.Now(), processCPU()
	each(b, vms, func(i int, vm string) error {
		for _, body := range adds[i] {
			if err := patch(vm, body); err != nil {
				return err
			}
		}
		for _, c := range share[i] {
			if err := w.wait(ctx, vm+"/"+c.claim, true); err != nil {
				return err
			}
		}
		return nil
	})
	r.attach, r.attachCPU = time.Since(started), processCPU()-cpu
	started, cpu = time.Now(), processCPU()
	each(b, vms, func(i int, vm string) error {
		for _, body := range removes[i] {
			if err := patch(vm, body); err != nil {
				return err
			}
		}
		for _, c := range share[i] {
			if err := w.wait(ctx, vm+"/"+c.claim, false); err != nil {
				return err
			}
		}
		return nil
	})
	r.detach, r.detachCPU = time.Since(started), processCPU()-cpu
	return r
}

// volumesOf tells how many spec.volumes entries the VM has (the seed's VMs may have their
// image disks there), -1 when it has no list.
func (st *benchStack) volumesOf(b *testing.B, vm string) int {
	b.Helper()
	code, body, err := st.api.do("GET", vmsPath+"/"+vm, nil)
	if err != nil || code != http.StatusOK {
		b.Fatalf("get %s: %d %s %v", vm, code, body, err)
	}
	var got struct {
		Spec struct {
			Volumes *[]json.RawMessage `json:"volumes"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		b.Fatal(err)
	}
	if got.Spec.Volumes == nil {
		return -1
	}
	return len(*got.Spec.Volumes)
}

// volumePatches are the JSON patches that append the claims to a VM's have volumes (-1: no
// list), in one patch with batch, else one each, and those that take them away again.
func volumePatches(claims []benchVolume, have int, batch bool) (adds, removes [][]byte) {
	var addOps, removeOps []string
	if have < 0 {
		addOps = append(addOps, `{"op":"add","path":"/spec/volumes","value":[]}`)
		have = 0
	}
	for _, c := range claims {
		addOps = append(addOps, fmt.Sprintf(`{"op":"add","path":"/spec/volumes/-","value":{"name":%q,"persistentVolumeClaim":{"claimName":%q}}}`, c.claim, c.claim))
		// Each removal moves the next claim's entry to the first claim's index.
		removeOps = append(removeOps, fmt.Sprintf(`{"op":"remove","path":"/spec/volumes/%d"}`, have))
	}
	patch := func(ops []string) []byte { return []byte("[" + strings.Join(ops, ",") + "]") }
	if batch {
		return [][]byte{patch(addOps)}, [][]byte{patch(removeOps)}
	}
	if len(addOps) > len(claims) { // the list is created with the first claim
		addOps = append([]string{addOps[0] + "," + addOps[1]}, addOps[2:]...)
	}
	for j := range claims {
		adds = append(adds, patch(addOps[j:j+1]))
		removes = append(removes, patch(removeOps[j:j+1]))
	}
	return adds, removes
}

func (st *benchStack) patchVM(vm string, patch []byte) error {
	req, err := http.NewRequest("PATCH", st.api.server+vmsPath+"/"+vm, strings.NewReader(string(patch)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+st.api.token)
	req.Header.Set("Content-Type", "application/json-patch+json")
	resp, err := st.api.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("patch %s: %d %s", vm, resp.StatusCode, body)
	}
	return nil
}

// directRound does the same vCenter work with govmomi alone: each VM's volumes in one CNS
// call and one reconfigure (batch), or one volume after the other.
func directRound(b *testing.B, c *cns.Client, vms []*object.VirtualMachine, vols []benchVolume, batch bool) volumeRound {
	ctx := context.Background()
	share := split(vols, len(vms))
	r := volumeRound{n: len(vols)}
	started, cpu := time.Now(), processCPU()
	each(b, vms, func(i int, vm *object.VirtualMachine) error {
		devices, err := vm.Device(ctx)
		if err != nil {
			return err
		}
		scsi, err := devices.FindSCSIController("")
		if err != nil {
			return err
		}
		used := map[int32]bool{7: true}
		for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
			if d.GetVirtualDevice().ControllerKey == scsi.Key {
				used[*d.GetVirtualDevice().UnitNumber] = true
			}
		}
		var disks []types.BaseVirtualDevice
		for k, v := range share[i] {
			unit := int32(0)
			for used[unit] {
				unit++
			}
			used[unit] = true
			disks = append(disks, &types.VirtualDisk{
				VirtualDevice: types.VirtualDevice{Key: int32(-1 - k), ControllerKey: scsi.Key, UnitNumber: &unit, Backing: &types.VirtualDiskFlatVer2BackingInfo{
					VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: v.path},
					DiskMode:                     string(types.VirtualDiskModePersistent), ThinProvisioned: types.NewBool(true),
				}},
				CapacityInBytes: 1 << 30, CapacityInKB: 1 << 20, VDiskId: &types.ID{Id: v.id},
			})
		}
		return inGroups(share[i], disks, batch, func(vols []benchVolume, disks []types.BaseVirtualDevice) error {
			if err := cnsTask(ctx, func() (*object.Task, error) { return c.AttachVolume(ctx, attachSpecs(vols, vm)) }); err != nil {
				return err
			}
			return reconfigureDevices(ctx, vm, types.VirtualDeviceConfigSpecOperationAdd, disks)
		})
	})
	r.attach, r.attachCPU = time.Since(started), processCPU()-cpu
	started, cpu = time.Now(), processCPU()
	each(b, vms, func(i int, vm *object.VirtualMachine) error {
		devices, err := vm.Device(ctx)
		if err != nil {
			return err
		}
		var disks []types.BaseVirtualDevice
		for _, v := range share[i] {
			var disk types.BaseVirtualDevice
			for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
				if id := d.(*types.VirtualDisk).VDiskId; id != nil && id.Id == v.id {
					disk = d
				}
			}
			if disk == nil {
				return fmt.Errorf("no disk of volume %s on %s", v.id, vm.Reference().Value)
			}
			disks = append(disks, disk)
		}
		return inGroups(share[i], disks, batch, func(vols []benchVolume, disks []types.BaseVirtualDevice) error {
			if err := cnsTask(ctx, func() (*object.Task, error) { return c.DetachVolume(ctx, attachSpecs(vols, vm)) }); err != nil {
				return err
			}
			return reconfigureDevices(ctx, vm, types.VirtualDeviceConfigSpecOperationRemove, disks)
		})
	})
	r.detach, r.detachCPU = time.Since(started), processCPU()-cpu
	return r
}

// inGroups calls f with all the volumes and their disks (batch), or with each volume and
// its disk in turn.
func inGroups(vols []benchVolume, disks []types.BaseVirtualDevice, batch bool, f func([]benchVolume, []types.BaseVirtualDevice) error) error {
	if batch {
		return f(vols, disks)
	}
	for i := range vols {
		if err := f(vols[i:i+1], disks[i:i+1]); err != nil {
			return err
		}
	}
	return nil
}

func attachSpecs(vols []benchVolume, vm *object.VirtualMachine) []cnstypes.CnsVolumeAttachDetachSpec {
	specs := make([]cnstypes.CnsVolumeAttachDetachSpec, len(vols))
	for i, v := range vols {
		specs[i] = cnstypes.CnsVolumeAttachDetachSpec{VolumeId: cnstypes.CnsVolumeId{Id: v.id}, Vm: vm.Reference()}
	}
	return specs
}

func cnsTask(ctx context.Context, start func() (*object.Task, error)) error {
	task, err := start()
	if err != nil {
		return err
	}
	_, err = vmopvc.WaitTask(ctx, task)
	return err
}

func reconfigureDevices(ctx context.Context, vm *object.VirtualMachine, op types.VirtualDeviceConfigSpecOperation, devices []types.BaseVirtualDevice) error {
	var changes []types.BaseVirtualDeviceConfigSpec
	for _, d := range devices {
		changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: op, Device: d})
	}
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{DeviceChange: changes})
	if err != nil {
		return err
	}
	_, err = vmopvc.WaitTask(ctx, task)
	return err
}

// split deals the items to n shares, round robin.
func split[T any](items []T, n int) [][]T {
	out := make([][]T, n)
	for i, it := range items {
		out[i%n] = append(out[i%n], it)
	}
	return out
}

// each runs f for every VM at once and fails on the first error.
func each[T any](b *testing.B, vms []T, f func(i int, vm T) error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(vms))
	for i, vm := range vms {
		wg.Go(func() {
			if err := f(i, vm); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// volumeWatch follows which volumes the VMs report attached ("<vm>/<volume>") through one
// API watch.
type volumeWatch struct {
	mu       sync.Mutex
	attached map[string]bool
	changed  chan struct{}
	err      error
}

func (w *volumeWatch) follow(ctx context.Context, c *apiClient) {
	rv := "0"
	for ctx.Err() == nil {
		next, err := w.once(ctx, c, rv)
		if err != nil && ctx.Err() == nil {
			w.mu.Lock()
			w.err = err
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
			return
		}
		rv = next
	}
}

func (w *volumeWatch) once(ctx context.Context, c *apiClient, rv string) (string, error) {
	resp, err := c.request(ctx, c.stream, "GET", vmsPath+"?watch=1&allowWatchBookmarks=true&resourceVersion="+rv, nil)
	if err != nil {
		return rv, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return rv, fmt.Errorf("watch: %d %s", resp.StatusCode, body)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct {
					Name            string `json:"name"`
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
				Status struct {
					Volumes []struct {
						Name     string `json:"name"`
						Attached bool   `json:"attached"`
					} `json:"volumes"`
				} `json:"status"`
			} `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return rv, nil
			}
			return rv, fmt.Errorf("watch: %w", err)
		}
		if ev.Type == "ERROR" {
			return rv, fmt.Errorf("watch error on %s", ev.Object.Metadata.Name)
		}
		rv = ev.Object.Metadata.ResourceVersion
		if ev.Type == "BOOKMARK" {
			continue
		}
		w.mu.Lock()
		prefix := ev.Object.Metadata.Name + "/"
		for k := range w.attached {
			if strings.HasPrefix(k, prefix) {
				delete(w.attached, k)
			}
		}
		for _, v := range ev.Object.Status.Volumes {
			if v.Attached {
				w.attached[prefix+v.Name] = true
			}
		}
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
}

// wait waits until the volume ("<vm>/<volume>") is reported attached, or not, within the
// benchmark's timeout.
func (w *volumeWatch) wait(ctx context.Context, key string, attached bool) error {
	deadline := time.NewTimer(*benchTimeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		done, err, changed := w.attached[key] == attached, w.err, w.changed
		w.mu.Unlock()
		switch {
		case err != nil:
			return err
		case done:
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("%s not %s after %v", key, map[bool]string{true: "attached", false: "detached"}[attached], *benchTimeout)
		}
	}
}
