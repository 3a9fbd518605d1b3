package inventory

import (
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/cns"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// CNS queries made while volumes are being created see each volume once it is created,
// and never read the volume manager's map as a create writes it (under -race, vcsim's
// own locking of the two reports a data race, or aborts the process without).
func TestCNSQueriesBesideCreates(t *testing.T) {
	ctx := testContext(t)
	c := seeded.client.Client
	client, err := cns.NewClient(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := find.NewFinder(c).Datastore(ctx, path.Join("/", Datacenter, "datastore", SharedDatastore))
	if err != nil {
		t.Fatal(err)
	}
	const volumes = 6
	prefix := fmt.Sprintf("%s-%d-", t.Name(), time.Now().UnixNano()) // the seeded vCenter outlives a test
	created := make(chan struct{})
	var queries sync.WaitGroup
	for range 2 {
		queries.Go(func() {
			for {
				if _, err := client.QueryVolume(ctx, &cnstypes.CnsQueryFilter{}); err != nil {
					t.Errorf("query: %v", err)
					return
				}
				if _, err := client.QueryAllVolume(ctx, cnstypes.CnsQueryFilter{}, cnstypes.CnsQuerySelection{}); err != nil {
					t.Errorf("query all: %v", err)
					return
				}
				select {
				case <-created:
					return
				default:
				}
			}
		})
	}
	var creates sync.WaitGroup
	for i := range volumes {
		creates.Go(func() {
			task, err := client.CreateVolume(ctx, []cnstypes.CnsVolumeCreateSpec{{
				Name: fmt.Sprintf("%s%d", prefix, i), VolumeType: string(cnstypes.CnsVolumeTypeBlock),
				Datastores: []types.ManagedObjectReference{ds.Reference()},
				Metadata:   cnstypes.CnsVolumeMetadata{ContainerCluster: cnstypes.CnsContainerCluster{ClusterType: string(cnstypes.CnsClusterTypeKubernetes), ClusterId: "vmop"}},
				BackingObjectDetails: &cnstypes.CnsBlockBackingDetails{
					CnsBackingObjectDetails: cnstypes.CnsBackingObjectDetails{CapacityInMb: 16},
				},
			}})
			if err == nil {
				_, err = vcenter.WaitTask(ctx, task)
			}
			if err != nil {
				t.Errorf("create volume %d: %v", i, err)
			}
		})
	}
	creates.Wait()
	close(created)
	queries.Wait()

	res, err := client.QueryVolume(ctx, &cnstypes.CnsQueryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, v := range res.Volumes {
		if strings.HasPrefix(v.Name, prefix) {
			found++
		}
	}
	if found != volumes {
		t.Errorf("the query lists %d of the %d volumes created", found, volumes)
	}
}
