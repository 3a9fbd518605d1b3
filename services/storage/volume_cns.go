package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// cnsVolume is what attaching needs of a CNS volume: its backing disk file and size.
type cnsVolume struct {
	id       string
	diskPath string // "[ds] fcd/<name>.vmdk"
	capacity int64  // bytes
}

// errInUse: CNS already records the volume as attached (to some VM).
var errInUse = errors.New("CNS volume already attached")

// cnsRegistry is CNS, the volumes' registry in vCenter.
type cnsRegistry struct {
	c     *cns.Client
	vc    *vim25.Client
	paths sync.Map // volume ID → its disk file, which does not change

	mu         sync.Mutex
	datastores map[string]types.ManagedObjectReference // by URL, read again for a URL it lacks
}

// volumes looks up the CNS volumes by ID in one query; an ID CNS does not know is absent
// from the answer.
func (r *cnsRegistry) volumes(ctx context.Context, ids []string) (map[string]cnsVolume, error) {
	out := map[string]cnsVolume{}
	if len(ids) == 0 {
		return out, nil
	}
	filter := cnstypes.CnsQueryFilter{}
	for _, id := range ids {
		filter.VolumeIds = append(filter.VolumeIds, cnstypes.CnsVolumeId{Id: id})
	}
	res, err := r.c.QueryVolume(ctx, &filter)
	if err != nil {
		return nil, fmt.Errorf("CNS query volumes %v: %w", ids, err)
	}
	found := make([]cnsVolume, len(res.Volumes))
	errs := make([]error, len(res.Volumes))
	var wg sync.WaitGroup
	for i, v := range res.Volumes {
		cv := cnsVolume{id: v.VolumeId.Id, capacity: v.BackingObjectDetails.GetCnsBackingObjectDetails().CapacityInMb << 20}
		if b, ok := v.BackingObjectDetails.(*cnstypes.CnsBlockBackingDetails); ok {
			cv.diskPath = b.BackingDiskPath
		}
		if p, ok := r.paths.Load(cv.id); ok && cv.diskPath == "" {
			cv.diskPath = p.(string)
		}
		found[i] = cv
		if cv.diskPath == "" && v.VolumeType == string(cnstypes.CnsVolumeTypeBlock) {
			// vcsim answers the base backing details, without the path: the volume's
			// first-class disk has it (the volumes' disks are asked about at once).
			wg.Go(func() { found[i].diskPath, errs[i] = r.fcdPath(ctx, v.VolumeId.Id, v.DatastoreUrl) })
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, cv := range found {
		if cv.diskPath != "" {
			r.paths.Store(cv.id, cv.diskPath)
		}
		out[cv.id] = cv
	}
	return out, nil
}

// fcdPath is the file of the first-class disk id on the datastore with the URL.
func (r *cnsRegistry) fcdPath(ctx context.Context, id, datastoreURL string) (string, error) {
	ds, err := r.datastore(ctx, datastoreURL)
	if err != nil || ds == nil {
		return "", err
	}
	c := r.vc
	res, err := methods.RetrieveVStorageObject(ctx, c, &types.RetrieveVStorageObject{
		This: *c.ServiceContent.VStorageObjectManager, Id: types.ID{Id: id}, Datastore: *ds,
	})
	if err != nil {
		return "", fmt.Errorf("retrieve first-class disk %s: %w", id, err)
	}
	if b, ok := res.Returnval.Config.Backing.(*types.BaseConfigInfoDiskFileBackingInfo); ok {
		return b.FilePath, nil
	}
	return "", nil
}

// datastore finds the datastore with the URL; nil when none has it.
func (r *cnsRegistry) datastore(ctx context.Context, url string) (*types.ManagedObjectReference, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ds, ok := r.datastores[url]; ok {
		return &ds, nil
	}
	c := r.vc
	cv, err := view.NewManager(c).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"Datastore"}, true)
	if err != nil {
		return nil, fmt.Errorf("find datastore %s: %w", url, err)
	}
	defer cv.Destroy(context.WithoutCancel(ctx)) //nolint:errcheck // the view goes with the session anyway
	var all []mo.Datastore
	if err := cv.Retrieve(ctx, []string{"Datastore"}, []string{"summary.url"}, &all); err != nil {
		return nil, fmt.Errorf("find datastore %s: %w", url, err)
	}
	r.datastores = make(map[string]types.ManagedObjectReference, len(all))
	for _, ds := range all {
		r.datastores[ds.Summary.Url] = ds.Self
	}
	if ds, ok := r.datastores[url]; ok {
		return &ds, nil
	}
	return nil, nil
}

// attachAll records in CNS that vm uses the volumes, in one task, and tells each volume's
// outcome, in the order of ids: nil, errInUse when CNS says it is attached already, or why
// it failed.
func (r *cnsRegistry) attachAll(ctx context.Context, ids []string, vm types.ManagedObjectReference) ([]error, error) {
	return r.batch(ctx, ids, vm, r.c.AttachVolume, func(id string, err error) error {
		if fault.Is(err, &types.ResourceInUse{}) {
			return errInUse
		}
		if err != nil {
			return fmt.Errorf("CNS attach volume %s to %s: %w", id, vm.Value, err)
		}
		return nil
	})
}

// detachAll records in CNS that vm no longer uses the volumes, in one task; a volume CNS
// does not record as attached (a detach that already ran) is detached.
func (r *cnsRegistry) detachAll(ctx context.Context, ids []string, vm types.ManagedObjectReference) error {
	outcomes, err := r.batch(ctx, ids, vm, r.c.DetachVolume, func(id string, err error) error {
		if err != nil && !fault.Is(err, &types.InvalidArgument{}) && !fault.Is(err, &types.NotFound{}) {
			return fmt.Errorf("CNS detach volume %s from %s: %w", id, vm.Value, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(outcomes...)
}

// batch runs one CNS attach or detach task for all the volumes and gives each volume's
// result (its fault, or nil) to outcome. A task that fails as a whole (vcsim fails it at
// the first volume it refuses, keeping what it did for those before) is run again one
// volume at a time, so that each volume gets its own answer; an error is returned only
// when CNS cannot be asked.
func (r *cnsRegistry) batch(ctx context.Context, ids []string, vm types.ManagedObjectReference,
	start func(context.Context, []cnstypes.CnsVolumeAttachDetachSpec) (*object.Task, error),
	outcome func(id string, err error) error) ([]error, error) {
	out := make([]error, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	specs := make([]cnstypes.CnsVolumeAttachDetachSpec, len(ids))
	for i, id := range ids {
		specs[i] = cnstypes.CnsVolumeAttachDetachSpec{VolumeId: cnstypes.CnsVolumeId{Id: id}, Vm: vm}
	}
	faults, err := r.run(ctx, func() (*object.Task, error) { return start(ctx, specs) })
	switch {
	case err == nil:
		for i, id := range ids {
			out[i] = outcome(id, faults[id])
		}
		return out, nil
	case !vcenter.IsFault(err):
		return nil, err
	case len(ids) == 1:
		out[0] = outcome(ids[0], err)
		return out, nil
	}
	for i := range ids {
		one, err := r.batch(ctx, ids[i:i+1], vm, start, outcome)
		if err != nil {
			return nil, err
		}
		out[i] = one[0]
	}
	return out, nil
}

// run starts a CNS task and waits for it; it returns the fault of each volume that has
// one, by volume ID, or the task's error.
func (r *cnsRegistry) run(ctx context.Context, start func() (*object.Task, error)) (map[string]error, error) {
	t, err := start()
	if err != nil {
		return nil, err
	}
	info, err := vcenter.WaitTask(ctx, t)
	if err != nil {
		return nil, err
	}
	results, err := cns.GetTaskResultArray(ctx, info)
	if err != nil {
		return nil, err
	}
	faults := map[string]error{}
	for _, res := range results {
		if r := res.GetCnsVolumeOperationResult(); r.Fault != nil {
			faults[r.VolumeId.Id] = task.Error{LocalizedMethodFault: r.Fault}
		}
	}
	return faults, nil
}
