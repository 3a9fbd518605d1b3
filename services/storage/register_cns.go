package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vslm"

	"github.com/vmop/vmop/pkg/vcenter"
)

// diskLocation is where a disk file lives, as CNS and the CnsRegisterVolume name it.
type diskLocation struct {
	datastore   types.ManagedObjectReference
	file        string // "[datastore] dir/disk.vmdk"
	registerURL string // the vStorage object manager's URL of the file (RegisterDisk)
	urlPath     string // the CnsRegisterVolume's diskURLPath: <datastore URL>/<path>
}

// locate finds the datastore URL and datacenter of a disk file: the datacenter's
// inventory path is the first ancestor of the datastore that is a datacenter.
func (r *registrar) locate(ctx context.Context, d imageDisk) (diskLocation, error) {
	var p object.DatastorePath
	if !p.FromString(d.backing.FileName) {
		return diskLocation{}, fmt.Errorf("disk file %q is not a datastore path", d.backing.FileName)
	}
	var ds mo.Datastore
	if err := property.DefaultCollector(r.vc.Client).RetrieveOne(ctx, d.datastore, []string{"name", "summary.url"}, &ds); err != nil {
		return diskLocation{}, fmt.Errorf("read datastore of %s: %w", d.backing.FileName, err)
	}
	ancestors, err := mo.Ancestors(ctx, r.vc.Client, r.vc.ServiceContent.PropertyCollector, d.datastore)
	if err != nil {
		return diskLocation{}, fmt.Errorf("find the datacenter of %s: %w", d.backing.FileName, err)
	}
	var dcPath []string
	for i, a := range ancestors {
		if i == 0 {
			continue // the root folder has no name in inventory paths
		}
		dcPath = append(dcPath, a.Name)
		if a.Self.Type == "Datacenter" {
			break
		}
	}
	u := object.NewDatastoreURL(*r.vc.URL(), strings.Join(dcPath, "/"), ds.Name, p.Path)
	return diskLocation{
		datastore:   d.datastore,
		file:        d.backing.FileName,
		registerURL: u.String(),
		urlPath:     strings.TrimSuffix(ds.Summary.Url, "/") + "/" + p.Path,
	}, nil
}

// ensureVolume returns the CNS volume named name backed by the disk file, registering
// the file in place when CNS has no such volume: the vStorage object manager makes it a
// first-class disk (RegisterDisk), then a CNS create naming that disk makes it a volume.
// Each step first looks for what an earlier, interrupted attempt made.
func (r *registrar) ensureVolume(ctx context.Context, name string, loc diskLocation, capacityMB int64, policyID string) (string, error) {
	if err := r.creates.awaitCreatesOf(ctx, name); err != nil {
		return "", err
	}
	found, err := r.cns.QueryVolume(ctx, &cnstypes.CnsQueryFilter{Names: []string{name}})
	if err != nil {
		return "", fmt.Errorf("query CNS volume %s: %w", name, err)
	}
	for _, v := range found.Volumes {
		return v.VolumeId.Id, nil
	}
	fcd, err := r.firstClassDisk(ctx, name, loc, capacityMB)
	if err != nil {
		return "", err
	}
	spec := cnstypes.CnsVolumeCreateSpec{
		Name: name, VolumeType: string(cnstypes.CnsVolumeTypeBlock),
		Datastores: []types.ManagedObjectReference{loc.datastore},
		Metadata:   cnstypes.CnsVolumeMetadata{ContainerCluster: r.cluster()},
		BackingObjectDetails: &cnstypes.CnsBlockBackingDetails{
			CnsBackingObjectDetails: cnstypes.CnsBackingObjectDetails{CapacityInMb: capacityMB},
			BackingDiskId:           fcd,
		},
	}
	if policyID != "" {
		spec.Profile = []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: policyID}}
	}
	t, err := r.cns.CreateVolume(ctx, []cnstypes.CnsVolumeCreateSpec{spec})
	if err != nil {
		return "", fmt.Errorf("register %s as CNS volume %s: %w", loc.file, name, err)
	}
	seen := r.creates.creating(name, t)
	info, err := cns.GetTaskInfo(ctx, t)
	seen(err)
	if err != nil {
		return "", fmt.Errorf("register %s as CNS volume %s: %w", loc.file, name, err)
	}
	res, err := cns.GetTaskResult(ctx, info)
	if err != nil {
		return "", fmt.Errorf("register %s as CNS volume %s: %w", loc.file, name, err)
	}
	op := res.GetCnsVolumeOperationResult()
	if op.Fault != nil {
		return "", fmt.Errorf("register %s as CNS volume %s: %w", loc.file, name, task.Error{LocalizedMethodFault: op.Fault})
	}
	return op.VolumeId.Id, nil
}

func (r *registrar) cluster() cnstypes.CnsContainerCluster {
	var user string
	if u := r.vc.URL().User; u != nil {
		user = u.Username()
	}
	return containerCluster(user)
}

// firstClassDisk returns the ID of the first-class disk backed by the file: registered
// now, or found among the datastore's when an earlier attempt registered it already
// (RegisterDisk refuses a file that is registered). The disk must report the file's
// capacity, which CNS copies into the volume: vcsim's RegisterDisk records none, so a
// smaller one is extended to the disk's size (vCenter reads it from the file).
func (r *registrar) firstClassDisk(ctx context.Context, name string, loc diskLocation, capacityMB int64) (string, error) {
	m := vslm.NewObjectManager(r.vc.Client)
	obj, err := m.RegisterDisk(ctx, loc.registerURL, name)
	if err != nil {
		if obj, err = findFirstClassDisk(ctx, m, loc, err); err != nil {
			return "", err
		}
	}
	id := obj.Config.Id.Id
	if obj.Config.CapacityInMB >= capacityMB {
		return id, nil
	}
	t, err := m.ExtendDisk(ctx, loc.datastore, id, capacityMB)
	if err == nil {
		_, err = vcenter.WaitTask(ctx, t)
	}
	if err != nil {
		return "", fmt.Errorf("record the size of first-class disk %s (%s): %w", id, loc.file, err)
	}
	return id, nil
}

// findFirstClassDisk finds the datastore's first-class disk backed by the file, after
// RegisterDisk refused it with regErr.
func findFirstClassDisk(ctx context.Context, m *vslm.ObjectManager, loc diskLocation, regErr error) (*types.VStorageObject, error) {
	ids, err := m.List(ctx, loc.datastore)
	if err != nil {
		return nil, fmt.Errorf("register %s as a first-class disk: %w (listing the datastore's: %v)", loc.file, regErr, err)
	}
	for _, id := range ids {
		o, err := m.Retrieve(ctx, loc.datastore, id.Id)
		if err != nil {
			continue // removed meanwhile, or its file is gone
		}
		if b, ok := o.Config.Backing.(*types.BaseConfigInfoDiskFileBackingInfo); ok && b.FilePath == loc.file {
			return o, nil
		}
	}
	return nil, fmt.Errorf("register %s as a first-class disk: %w", loc.file, regErr)
}
