package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vslm"

	"github.com/vmop/vmop/pkg/inventory"
)

// BenchmarkDirectFloor measures what the seed's vm-example asks of vCenter, done directly
// with govmomi (the floor), against BenchmarkPipeline's direct path (deploy and power on;
// power off and destroy) on the same vcsim in the same run. vm-example names a storage class
// and a cloud-init bootstrap, and VM Operator registers an image's disks as volumes, so any
// implementation must at least choose a zone (PlaceVmsXCluster), deploy, read the VM's disks
// and power state, write the cloud-init ExtraConfig (one reconfigure), register the boot disk
// as a first-class disk and a CNS volume, and power on; and, since a redelivered create must
// repeat no vCenter operation, look the VM up before deploying it and the volume before
// creating it. What the floor costs over the bare path bounds the ratios BenchmarkPipeline
// can reach, whatever vmop does around that work. The floor's delete is the bare one (what
// removes the registered volume is not counted), so its create figures are the ones that
// bound; the idle stack runs beside both paths, as in BenchmarkPipeline. -vms and -rounds
// as for BenchmarkPipeline.
func BenchmarkDirectFloor(b *testing.B) {
	n := *benchVMs
	st := startBenchStack(b)
	direct := connectDirect(b, st.vcenter)
	floor := newFloorPath(b, direct)
	b.ResetTimer()
	var bare, same round
	for i := range b.N {
		for j := range *benchRounds {
			bare.add(direct.round(b, fmt.Sprintf("bare-%d-%d", i, j), n))
			same.add(floor.round(b, fmt.Sprintf("floor-%d-%d", i, j), n))
		}
	}
	b.StopTimer()
	cpuRatio := cpuPerVM(same.createCPU, same.n) / cpuPerVM(bare.createCPU, bare.n)
	b.ReportMetric(cpuRatio, "floor-create-cpu-ratio")
	b.ReportMetric(same.createRate()/bare.createRate(), "floor-create-ratio")
	b.ReportMetric(same.deleteRate()/bare.deleteRate(), "floor-delete-ratio")
	b.Logf("%d VMs a round, %d at a time; vm-example's vCenter work done directly (floor) against deploy and power on (bare)\n"+
		"  create:  floor %6.1f VMs/s   bare %6.1f VMs/s   floor/bare %.2f\n"+
		"  delete:  floor %6.1f VMs/s   bare %6.1f VMs/s   floor/bare %.2f\n"+
		"  to PoweredOn: floor p50 %v p99 %v   bare p50 %v p99 %v\n"+
		"  CPU per VM (create): floor %.1f ms   bare %.1f ms   floor/bare %.2f",
		n, benchConcurrency,
		same.createRate(), bare.createRate(), same.createRate()/bare.createRate(),
		same.deleteRate(), bare.deleteRate(), same.deleteRate()/bare.deleteRate(),
		same.percentile(0.50).Round(time.Millisecond), same.percentile(0.99).Round(time.Millisecond),
		bare.percentile(0.50).Round(time.Millisecond), bare.percentile(0.99).Round(time.Millisecond),
		cpuPerVM(same.createCPU, same.n), cpuPerVM(bare.createCPU, bare.n), cpuRatio)
}

// floorPath is the direct path doing vm-example's vCenter work.
type floorPath struct {
	*directPath
	cns   *cns.Client
	pools []types.ManagedObjectReference // the zones' pools, in directPath.zones order
}

func newFloorPath(b *testing.B, d *directPath) *floorPath {
	b.Helper()
	c, err := cns.NewClient(context.Background(), d.c.Client)
	if err != nil {
		b.Fatal(err)
	}
	f := &floorPath{directPath: d, cns: c}
	for _, z := range d.zones {
		f.pools = append(f.pools, z.pool)
	}
	return f
}

// round is directPath.round with the floor's create.
func (f *floorPath) round(b *testing.B, prefix string, n int) round {
	return vmRound(b, prefix, n, f.createAndPowerOn)
}

func (f *floorPath) createAndPowerOn(ctx context.Context, name string) (*object.VirtualMachine, error) {
	res, err := object.NewRootFolder(f.c.Client).PlaceVmsXCluster(ctx, types.PlaceVmsXClusterSpec{
		ResourcePools:    f.pools,
		VmPlacementSpecs: []types.PlaceVmsXClusterSpecVmPlacementSpec{{ConfigSpec: types.VirtualMachineConfigSpec{Name: name}}},
	})
	if err != nil {
		return nil, fmt.Errorf("place %s: %w", name, err)
	}
	z, ok := f.recommended(res)
	if !ok {
		return nil, fmt.Errorf("place %s: PlaceVmsXCluster recommended none of the zones", name)
	}
	// A redelivered create must not deploy twice: look the VM up by its instance UUID first.
	instanceUUID := uuid.NewString()
	found, err := object.NewSearchIndex(f.c.Client).FindByUuid(ctx, nil, instanceUUID, true, types.NewBool(true))
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", name, err)
	}
	if found != nil {
		return nil, fmt.Errorf("%s exists already", name)
	}
	vm, err := f.deploy(ctx, name, z, instanceUUID)
	if err != nil {
		return nil, err
	}
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.hardware.device", "runtime.powerState"}, &m); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	userdata := base64.StdEncoding.EncodeToString([]byte("#cloud-config\n{}\n"))
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
		&types.OptionValue{Key: "guestinfo.userdata", Value: userdata},
		&types.OptionValue{Key: "guestinfo.userdata.encoding", Value: "base64"},
	}})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("write cloud-init of %s: %w", name, err)
	}
	if err := f.registerBootDisk(ctx, name, z, m.Config.Hardware.Device); err != nil {
		return nil, err
	}
	if task, err = vm.PowerOn(ctx); err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("power on %s: %w", name, err)
	}
	return vm, nil
}

// recommended is the zone whose pool PlaceVmsXCluster's answer places the VM in.
func (f *floorPath) recommended(res *types.PlaceVmsXClusterResult) (directZone, bool) {
	for _, info := range res.PlacementInfos {
		for _, a := range info.Recommendation.Action {
			if ip, ok := a.(*types.ClusterClusterInitialPlacementAction); ok {
				for _, z := range f.zones {
					if z.pool == ip.Pool {
						return z, true
					}
				}
			}
		}
	}
	return directZone{}, false
}

// registerBootDisk makes the VM's first disk a first-class disk and a CNS volume.
func (f *floorPath) registerBootDisk(ctx context.Context, name string, z directZone, devices object.VirtualDeviceList) error {
	disks := devices.SelectByType((*types.VirtualDisk)(nil))
	if len(disks) == 0 {
		return fmt.Errorf("%s has no disk", name)
	}
	disk := disks[0].(*types.VirtualDisk)
	backing, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
	var p object.DatastorePath
	if !ok || !p.FromString(backing.FileName) {
		return fmt.Errorf("%s: boot disk has no file", name)
	}
	u := object.NewDatastoreURL(*f.c.Client.URL(), inventory.Datacenter, p.Datastore, p.Path)
	// A redelivery must not register twice: look for the volume first.
	found, err := f.cns.QueryVolume(ctx, &cnstypes.CnsQueryFilter{Names: []string{name}})
	if err != nil {
		return fmt.Errorf("look up the volume of %s: %w", name, err)
	}
	if len(found.Volumes) != 0 {
		return fmt.Errorf("the volume of %s exists already", name)
	}
	fcd, err := vslm.NewObjectManager(f.c.Client).RegisterDisk(ctx, u.String(), name)
	if err != nil {
		return fmt.Errorf("register the disk of %s: %w", name, err)
	}
	t, err := f.cns.CreateVolume(ctx, []cnstypes.CnsVolumeCreateSpec{{
		Name: name, VolumeType: string(cnstypes.CnsVolumeTypeBlock),
		Datastores: []types.ManagedObjectReference{z.datastore},
		Metadata: cnstypes.CnsVolumeMetadata{ContainerCluster: cnstypes.CnsContainerCluster{
			ClusterType: string(cnstypes.CnsClusterTypeKubernetes), ClusterId: "vmop-bench", VSphereUser: "bench"}},
		BackingObjectDetails: &cnstypes.CnsBlockBackingDetails{
			CnsBackingObjectDetails: cnstypes.CnsBackingObjectDetails{CapacityInMb: disk.CapacityInKB / 1024},
			BackingDiskId:           fcd.Config.Id.Id,
		},
	}})
	if err == nil {
		_, err = cns.GetTaskInfo(ctx, t)
	}
	if err != nil {
		return fmt.Errorf("make the disk of %s a CNS volume: %w", name, err)
	}
	return nil
}
