package inventory

import (
	"context"
	"fmt"
	"path"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// networks checks the standard networks and builds DistributedSwitch, with every host as a member
// and the distributed port groups of Networks.
func (s *seeder) networks(ctx context.Context) error {
	var distributed []string
	for _, n := range Networks {
		if n.Distributed {
			distributed = append(distributed, n.Name)
			continue
		}
		// vCenter (and vcsim) create "VM Network" with the datacenter and on every host; a
		// standard port group is a per-host setting, not something to invent here.
		if _, err := s.finder.Network(ctx, s.networkPath(n.Name)); err != nil {
			return fmt.Errorf("standard network %q: %w", n.Name, err)
		}
	}
	if len(distributed) == 0 {
		return nil
	}
	dvs, err := s.distributedSwitch(ctx)
	if err != nil {
		return err
	}
	if err := s.joinSwitch(ctx, dvs); err != nil {
		return err
	}
	for _, name := range distributed {
		if err := s.portgroup(ctx, dvs, name); err != nil {
			return err
		}
	}
	return nil
}

func (s *seeder) networkPath(name string) string {
	return path.Join(s.folders.NetworkFolder.InventoryPath, name)
}

func (s *seeder) distributedSwitch(ctx context.Context) (*object.DistributedVirtualSwitch, error) {
	ref, err := s.finder.Network(ctx, s.networkPath(DistributedSwitch))
	if err == nil {
		dvs, ok := ref.(*object.DistributedVirtualSwitch)
		if !ok {
			return nil, fmt.Errorf("network %s is a %T, not a distributed switch", DistributedSwitch, ref)
		}
		return dvs, nil
	}
	if !isNotFound(err) {
		return nil, fmt.Errorf("distributed switch %s: %w", DistributedSwitch, err)
	}
	spec := types.DVSCreateSpec{ConfigSpec: &types.VMwareDVSConfigSpec{DVSConfigSpec: types.DVSConfigSpec{Name: DistributedSwitch}}}
	task, err := s.folders.NetworkFolder.CreateDVS(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("create distributed switch %s: %w", DistributedSwitch, err)
	}
	info, err := task.WaitForResult(ctx)
	if err != nil {
		return nil, fmt.Errorf("create distributed switch %s: %w", DistributedSwitch, err)
	}
	dvs := object.NewDistributedVirtualSwitch(s.c.Client, info.Result.(types.ManagedObjectReference))
	dvs.InventoryPath = s.networkPath(DistributedSwitch)
	return dvs, nil
}

// joinSwitch adds the hosts that are not yet members of the switch.
func (s *seeder) joinSwitch(ctx context.Context, dvs *object.DistributedVirtualSwitch) error {
	var sw mo.DistributedVirtualSwitch
	if err := dvs.Properties(ctx, dvs.Reference(), []string{"config", "summary.hostMember"}, &sw); err != nil {
		return fmt.Errorf("config of distributed switch %s: %w", DistributedSwitch, err)
	}
	cfg := sw.Config.GetDVSConfigInfo()
	// vCenter lists members in both places; vcsim fills only the summary.
	members := make(map[types.ManagedObjectReference]bool, len(cfg.Host))
	for _, m := range cfg.Host {
		if m.Config.Host != nil {
			members[*m.Config.Host] = true
		}
	}
	for _, h := range sw.Summary.HostMember {
		members[h] = true
	}
	spec := &types.DVSConfigSpec{ConfigVersion: cfg.ConfigVersion}
	for _, h := range s.allHosts() {
		if !members[h.Reference()] {
			spec.Host = append(spec.Host, types.DistributedVirtualSwitchHostMemberConfigSpec{
				Operation: string(types.ConfigSpecOperationAdd),
				Host:      h.Reference(),
			})
		}
	}
	if len(spec.Host) == 0 {
		return nil
	}
	task, err := dvs.Reconfigure(ctx, spec)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("add hosts to distributed switch %s: %w", DistributedSwitch, err)
	}
	return nil
}

func (s *seeder) portgroup(ctx context.Context, dvs *object.DistributedVirtualSwitch, name string) error {
	_, err := s.finder.Network(ctx, s.networkPath(name))
	if err == nil {
		return nil
	}
	if !isNotFound(err) {
		return fmt.Errorf("port group %s: %w", name, err)
	}
	task, err := dvs.AddPortgroup(ctx, []types.DVPortgroupConfigSpec{{
		Name:     name,
		Type:     string(types.DistributedVirtualPortgroupPortgroupTypeEarlyBinding),
		NumPorts: 128,
	}})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("add port group %s: %w", name, err)
	}
	return nil
}
