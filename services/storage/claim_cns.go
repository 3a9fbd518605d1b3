package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/object"
	govtask "github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/vcenter"
)

// cnsClusterID names vmop as the container cluster its CNS volumes belong to.
const cnsClusterID = "vmop"

// volumes is the claims' side of CNS: the registry of their block volumes.
type volumes struct {
	vc   *govmomi.Client
	cns  *cns.Client
	user string // the vSphere user CNS records as the cluster's
	// unseen: volume name → *object.Task, a creation of this run whose outcome it has not
	// seen (running, or its wait unanswered); every other unfinished one is another's.
	unseen sync.Map
	// othersWait bounds the wait for creations this run did not issue; zero is
	// othersCreatesWait.
	othersWait time.Duration

	mu     sync.Mutex
	passed map[string]bool // recent vCenter tasks that are finished or no CNS creation, by ID
}

// volume is what the claim loop needs of a CNS volume.
type volume struct {
	ID       string
	Capacity resource.Quantity
}

// claimVolumeName is the CNS volume of a claim, by the claim's UID: a provisioning that crashed
// after the create finds its volume by this name instead of creating a second one.
func claimVolumeName(claimUID string) string { return "pvc-" + claimUID }

// byName returns the volume named name, found false when CNS has none.
func (v *volumes) byName(ctx context.Context, name string) (volume, bool, error) {
	return v.query(ctx, cnstypes.CnsQueryFilter{Names: []string{name}})
}

// byID returns the volume with the ID, found false when CNS has none.
func (v *volumes) byID(ctx context.Context, id string) (volume, bool, error) {
	return v.query(ctx, cnstypes.CnsQueryFilter{VolumeIds: []cnstypes.CnsVolumeId{{Id: id}}})
}

func (v *volumes) query(ctx context.Context, f cnstypes.CnsQueryFilter) (volume, bool, error) {
	res, err := v.cns.QueryVolume(ctx, &f)
	if err != nil {
		return volume{}, false, fmt.Errorf("query CNS volumes: %w", err)
	}
	if len(res.Volumes) == 0 {
		return volume{}, false, nil
	}
	cv := res.Volumes[0]
	out := volume{ID: cv.VolumeId.Id}
	if d := cv.BackingObjectDetails; d != nil {
		out.Capacity = mebibytes(d.GetCnsBackingObjectDetails().CapacityInMb)
	}
	return out, true, nil
}

// diskPath is the file backing the volume's disk, "" when CNS knows no such volume. It
// asks for the volume's first-class disk: a query's backing details may come without their
// block type (vcsim sends them untyped), and with it without the path.
func (v *volumes) diskPath(ctx context.Context, id string) (string, error) {
	task, err := v.cns.QueryVolumeInfo(ctx, []cnstypes.CnsVolumeId{{Id: id}})
	if err != nil {
		return "", fmt.Errorf("query CNS volume %s: %w", id, err)
	}
	info, err := vcenter.WaitTask(ctx, task)
	if err != nil {
		return "", fmt.Errorf("query CNS volume %s: %w", id, err)
	}
	results, err := cns.GetTaskResultArray(ctx, info)
	if err != nil {
		return "", nil // no result: no such volume
	}
	for _, r := range results {
		res, ok := r.(*cnstypes.CnsQueryVolumeInfoResult)
		if !ok {
			continue
		}
		if block, ok := res.VolumeInfo.(*cnstypes.CnsBlockVolumeInfo); ok {
			if b, ok := block.VStorageObject.Config.Backing.(*types.BaseConfigInfoDiskFileBackingInfo); ok {
				return b.FilePath, nil
			}
		}
	}
	return "", nil
}

// create makes a block volume of the size with the storage policy, for the claim
// namespace/claim; CNS places it on a datastore of the policy among on, or among all of
// vCenter's when on is empty.
func (v *volumes) create(ctx context.Context, name, policyID, namespace, claim string, size resource.Quantity, on []types.ManagedObjectReference) (string, error) {
	datastores := on
	if len(datastores) == 0 {
		var err error
		if datastores, err = v.datastores(ctx); err != nil {
			return "", err
		}
	}
	spec := cnstypes.CnsVolumeCreateSpec{
		Name:       name,
		VolumeType: string(cnstypes.CnsVolumeTypeBlock),
		Datastores: datastores,
		Metadata: cnstypes.CnsVolumeMetadata{
			ContainerCluster: containerCluster(v.user),
			EntityMetadata: []cnstypes.BaseCnsEntityMetadata{&cnstypes.CnsKubernetesEntityMetadata{
				CnsEntityMetadata: cnstypes.CnsEntityMetadata{EntityName: claim, ClusterID: cnsClusterID},
				EntityType:        string(cnstypes.CnsKubernetesEntityTypePVC),
				Namespace:         namespace,
			}},
		},
		BackingObjectDetails: &cnstypes.CnsBlockBackingDetails{
			CnsBackingObjectDetails: cnstypes.CnsBackingObjectDetails{CapacityInMb: toMebibytes(size)},
		},
		Profile: []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: policyID}},
	}
	task, err := v.cns.CreateVolume(ctx, []cnstypes.CnsVolumeCreateSpec{spec})
	if err != nil {
		return "", fmt.Errorf("create CNS volume %s: %w", name, err)
	}
	seen := v.creating(name, task)
	res, err := v.result(ctx, task)
	seen(err)
	if err != nil {
		return "", fmt.Errorf("create CNS volume %s: %w", name, err)
	}
	return res.VolumeId.Id, nil
}

// extend grows the volume to size.
func (v *volumes) extend(ctx context.Context, id string, size resource.Quantity) error {
	task, err := v.cns.ExtendVolume(ctx, []cnstypes.CnsVolumeExtendSpec{{
		VolumeId: cnstypes.CnsVolumeId{Id: id}, CapacityInMb: toMebibytes(size),
	}})
	if err == nil {
		_, err = v.result(ctx, task)
	}
	if err != nil {
		return fmt.Errorf("extend CNS volume %s to %s: %w", id, size.String(), err)
	}
	return nil
}

// remove deletes the volume and its disk; a volume CNS no longer has is gone already.
func (v *volumes) remove(ctx context.Context, id string) error {
	task, err := v.cns.DeleteVolume(ctx, []cnstypes.CnsVolumeId{{Id: id}}, true)
	if err == nil {
		_, err = v.result(ctx, task)
	}
	if notFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete CNS volume %s: %w", id, err)
	}
	return nil
}

// result waits for a CNS task of one volume and returns that volume's result; the
// volume's fault, which CNS reports in a successful task, is the error, as a task's.
func (v *volumes) result(ctx context.Context, task *object.Task) (*cnstypes.CnsVolumeOperationResult, error) {
	info, err := vcenter.WaitTask(ctx, task)
	if err != nil {
		return nil, err
	}
	res, err := cns.GetTaskResult(ctx, info)
	if err != nil {
		return nil, err
	}
	op := res.GetCnsVolumeOperationResult()
	if op.Fault != nil {
		if op.Fault.LocalizedMessage == "" {
			op.Fault.LocalizedMessage = fmt.Sprintf("%T", op.Fault.Fault)
		}
		return nil, govtask.Error{LocalizedMethodFault: op.Fault}
	}
	return op, nil
}

// notFound reports that vCenter answered err with a NotFound fault.
func notFound(err error) bool {
	var te govtask.Error
	if !errors.As(err, &te) {
		return false
	}
	_, ok := te.Fault().(*types.NotFound)
	return ok
}

// containerCluster is the container cluster CNS records vmop's volumes under, created or
// registered by user.
func containerCluster(user string) cnstypes.CnsContainerCluster {
	return cnstypes.CnsContainerCluster{
		ClusterType:         string(cnstypes.CnsClusterTypeKubernetes),
		ClusterId:           cnsClusterID,
		VSphereUser:         user,
		ClusterFlavor:       string(cnstypes.CnsClusterFlavorWorkload),
		ClusterDistribution: cnsClusterID,
	}
}

// datastores are all of vCenter's datastores, for CNS to choose one of the policy from.
func (v *volumes) datastores(ctx context.Context) ([]types.ManagedObjectReference, error) {
	m := view.NewManager(v.vc.Client)
	cv, err := m.CreateContainerView(ctx, v.vc.ServiceContent.RootFolder, []string{"Datastore"}, true)
	if err != nil {
		return nil, fmt.Errorf("list datastores: %w", err)
	}
	defer func() { _ = cv.Destroy(context.WithoutCancel(ctx)) }()
	refs, err := cv.Find(ctx, []string{"Datastore"}, nil)
	if err != nil {
		return nil, fmt.Errorf("list datastores: %w", err)
	}
	if len(refs) == 0 {
		return nil, errors.New("vCenter has no datastore")
	}
	return refs, nil
}

const mebibyte = 1 << 20

func mebibytes(mb int64) resource.Quantity {
	return *resource.NewQuantity(mb*mebibyte, resource.BinarySI)
}

// toMebibytes is size in whole MiB, rounded up: a volume is never smaller than asked.
func toMebibytes(size resource.Quantity) int64 {
	return (size.Value() + mebibyte - 1) / mebibyte
}
