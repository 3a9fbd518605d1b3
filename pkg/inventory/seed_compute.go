package inventory

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
)

// datacenter finds or creates Datacenter.
func (s *seeder) datacenter(ctx context.Context) error {
	dc, err := s.finder.Datacenter(ctx, Datacenter)
	if isNotFound(err) {
		dc, err = object.NewRootFolder(s.c.Client).CreateDatacenter(ctx, Datacenter)
	}
	if err != nil {
		return fmt.Errorf("datacenter %s: %w", Datacenter, err)
	}
	folders, err := dc.Folders(ctx)
	if err != nil {
		return fmt.Errorf("folders of datacenter %s: %w", Datacenter, err)
	}
	s.dc, s.folders = dc, folders
	s.finder.SetDatacenter(dc)
	return nil
}

// zones finds or creates each zone's cluster and hosts.
func (s *seeder) zones(ctx context.Context) error {
	s.clusters = make(map[string]*object.ClusterComputeResource, len(Zones))
	s.hosts = make(map[string][]*object.HostSystem, len(Zones))
	for _, z := range Zones {
		cluster, err := s.cluster(ctx, z.Cluster)
		if err != nil {
			return err
		}
		hosts, err := s.clusterHosts(ctx, cluster, z.Hosts)
		if err != nil {
			return err
		}
		s.clusters[z.Name], s.hosts[z.Name] = cluster, hosts
	}
	return nil
}

func (s *seeder) cluster(ctx context.Context, name string) (*object.ClusterComputeResource, error) {
	cluster, err := s.finder.ClusterComputeResource(ctx, path.Join(s.folders.HostFolder.InventoryPath, name))
	if isNotFound(err) {
		spec := types.ClusterConfigSpecEx{DrsConfig: &types.ClusterDrsConfigInfo{Enabled: types.NewBool(true)}}
		cluster, err = s.folders.HostFolder.CreateCluster(ctx, name, spec)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	return cluster, nil
}

// clusterHosts returns the named hosts of the cluster, adding the missing ones (vcsim connects a
// host from its name alone).
func (s *seeder) clusterHosts(ctx context.Context, cluster *object.ClusterComputeResource, names []string) ([]*object.HostSystem, error) {
	existing, err := s.finder.HostSystemList(ctx, path.Join(cluster.InventoryPath, "*"))
	if err != nil && !isNotFound(err) {
		return nil, fmt.Errorf("hosts of cluster %s: %w", cluster.Name(), err)
	}
	byName := make(map[string]*object.HostSystem, len(existing))
	for _, h := range existing {
		byName[h.Name()] = h
	}
	hosts := make([]*object.HostSystem, 0, len(names))
	for _, name := range names {
		h, ok := byName[name]
		if !ok {
			if h, err = addHost(ctx, cluster, name); err != nil {
				return nil, err
			}
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

func addHost(ctx context.Context, cluster *object.ClusterComputeResource, name string) (*object.HostSystem, error) {
	task, err := cluster.AddHost(ctx, types.HostConnectSpec{HostName: name, Force: true}, true, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("add host %s to %s: %w", name, cluster.Name(), err)
	}
	info, err := task.WaitForResult(ctx)
	if err != nil {
		return nil, fmt.Errorf("add host %s to %s: %w", name, cluster.Name(), err)
	}
	h := object.NewHostSystem(cluster.Client(), info.Result.(types.ManagedObjectReference))
	h.InventoryPath = path.Join(cluster.InventoryPath, name)
	return h, nil
}

func isNotFound(err error) bool {
	var nf *find.NotFoundError
	return errors.As(err, &nf)
}
