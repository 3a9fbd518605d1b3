package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/pbm"
	pbmtypes "github.com/vmware/govmomi/pbm/types"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// errNoCompatibleDatastore: vCenter does not know the VM's storage policy, or PBM calls
// none of the candidate datastores compatible with it. PlacementReady says so with reason
// DatastoreNotFound, which the storage service repeats in VirtualMachineStorageReady.
var errNoCompatibleDatastore = errors.New("no datastore compatible with the storage policy")

// storagePolicy is the vSphere storage (SPBM) policy of the VM's StorageClass: its home and
// image disks are created with it, on a datastore PBM calls compatible with it.
type storagePolicy struct {
	class, id string
}

func (p storagePolicy) String() string {
	return fmt.Sprintf("storage policy %s of StorageClass %s", p.id, p.class)
}

// resolveStoragePolicy reads spec.storageClass from SPECS. nil without an error when the class
// is not set, missing or names no policy: storage reports why (VirtualMachineStorageReady),
// and the class appearing (a related object) triggers the VM again.
func (r *reconciler) resolveStoragePolicy(ctx context.Context, name string) (*storagePolicy, error) {
	if name == "" {
		return nil, nil
	}
	body, found, err := r.liveSpec(ctx, events.Ref{Plural: pluralStorageClasses, Name: name})
	if err != nil || !found {
		return nil, err
	}
	var sc model.StorageClass
	if err := json.Unmarshal(body, &sc); err != nil {
		return nil, nil
	}
	id := sc.Parameters[model.StoragePolicyIDParameter]
	if id == "" {
		return nil, nil
	}
	return &storagePolicy{class: name, id: id}, nil
}

// compatibleDatastores narrows dss to those PBM calls compatible with the policy: vCenter's
// own placement answer for storage. A policy vCenter does not know is errNoCompatibleDatastore.
func (r *reconciler) compatibleDatastores(ctx context.Context, p storagePolicy, dss []datastoreCapacity) ([]datastoreCapacity, error) {
	if len(dss) == 0 {
		return nil, nil
	}
	// A client per placement: it carries the session cookie current when it is made, which a
	// re-login (vcenter.Connect's) replaces.
	pc, err := pbm.NewClient(ctx, r.vc.c.Client)
	if err != nil {
		return nil, fmt.Errorf("pbm client: %w", err)
	}
	profile := pbmtypes.PbmProfileId{UniqueId: p.id}
	if _, err := pc.RetrieveContent(ctx, []pbmtypes.PbmProfileId{profile}); err != nil {
		if fault.Is(err, &types.InvalidArgument{}) {
			return nil, fmt.Errorf("%w: %s is not known to vCenter", errNoCompatibleDatastore, p)
		}
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	hubs := make([]pbmtypes.PbmPlacementHub, len(dss))
	for i, ds := range dss {
		hubs[i] = pbmtypes.PbmPlacementHub{HubType: ds.ref.Type, HubId: ds.ref.Value}
	}
	res, err := pc.CheckRequirements(ctx, hubs, nil, []pbmtypes.BasePbmPlacementRequirement{
		&pbmtypes.PbmPlacementCapabilityProfileRequirement{ProfileId: profile}})
	if err != nil {
		return nil, fmt.Errorf("check datastores against %s: %w", p, err)
	}
	compatible := map[string]bool{}
	for _, hub := range res.CompatibleDatastores() {
		compatible[hub.HubId] = true
	}
	// PBM may answer for more hubs than asked (vcsim answers for every datastore): keep the
	// candidates only.
	var out []datastoreCapacity
	for _, ds := range dss {
		if compatible[ds.ref.Value] {
			out = append(out, ds)
		}
	}
	return out, nil
}
