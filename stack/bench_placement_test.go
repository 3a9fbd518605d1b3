package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	vmopvc "github.com/vmop/vmop/pkg/vcenter"
)

// benchPlacementVMs: `go test -run '^$' -bench Placement -placement-vms 40 ./stack`.
var benchPlacementVMs = flag.Int("placement-vms", 200, "VirtualMachines per round of BenchmarkPlacement, in groups of 4")

const (
	benchGroupSize  = 4
	benchGroupLabel = "bench-group"
	vmgsPath        = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/" + benchNamespace + "/virtualmachinegroups"
)

// BenchmarkPlacement measures placement with affinity against the vCenter work it stands
// for. One round creates -placement-vms VMs through the API in VirtualMachineGroups of 4,
// each VM with required host anti-affinity to its group's other members, waits until all
// are PoweredOn, then deletes them. The direct path does with govmomi what placement does
// for each VM at the same concurrency: it chooses a host none of the group's VMs is on,
// asks PlaceVmsXCluster among the zones that have one, deploys there, powers on and puts
// the VM into its group's anti-affinity rule in the cluster; then it takes each VM out of
// its rule, powers it off and destroys it. Both rates and their ratio (target ≥ 0.8).
func BenchmarkPlacement(b *testing.B) {
	n := max(*benchPlacementVMs/benchGroupSize, 1) * benchGroupSize
	st := startBenchStack(b)
	dp := newDirectPlacement(b, connectDirect(b, st.vcenter))
	b.ResetTimer()
	var api, raw round
	for i := range b.N {
		api.add(st.apiGroupRound(b, fmt.Sprintf("pl-%d", i), n))
		raw.add(dp.round(b, fmt.Sprintf("dpl-%d", i), n))
	}
	b.StopTimer()
	ratio := api.createRate() / raw.createRate()
	b.ReportMetric(api.createRate(), "api-create-VMs/s")
	b.ReportMetric(raw.createRate(), "direct-create-VMs/s")
	b.ReportMetric(ratio, "create-ratio")
	b.ReportMetric(api.deleteRate()/raw.deleteRate(), "delete-ratio")
	b.ReportMetric(cpuPerVM(api.createCPU, api.n), "api-create-cpu-ms/VM")
	b.ReportMetric(cpuPerVM(raw.createCPU, raw.n), "direct-create-cpu-ms/VM")
	b.Logf("%d VMs a round in groups of %d with host anti-affinity, %d at a time\n"+
		"  place, create and power on: API %6.1f VMs/s (%v)   direct %6.1f VMs/s (%v)   API/direct %.2f\n"+
		"  delete:                     API %6.1f VMs/s (%v)   direct %6.1f VMs/s (%v)   API/direct %.2f\n"+
		"  CPU per VM, create: API %.1f ms   direct %.1f ms   API/direct %.1f; delete: API %.1f ms   direct %.1f ms\n"+
		"  API per VM (create):\n%s\n  API per VM (delete):\n%s",
		n, benchGroupSize, benchConcurrency,
		api.createRate(), api.create.Round(time.Millisecond), raw.createRate(), raw.create.Round(time.Millisecond), ratio,
		api.deleteRate(), api.delete.Round(time.Millisecond), raw.deleteRate(), raw.delete.Round(time.Millisecond), api.deleteRate()/raw.deleteRate(),
		cpuPerVM(api.createCPU, api.n), cpuPerVM(raw.createCPU, raw.n), float64(api.createCPU)/float64(raw.createCPU),
		cpuPerVM(api.deleteCPU, api.n), cpuPerVM(raw.deleteCPU, raw.n),
		api.createWork.perVM(api.n), api.deleteWork.perVM(api.n))
}

// groupOf is the name of the group of the i-th VM of a round.
func groupOf(prefix string, i int) string { return fmt.Sprintf("%s-g%03d", prefix, i/benchGroupSize) }

// benchGroupVM is the seed's vm-example in group, kept off its group's other members' hosts.
func benchGroupVM(name, group string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine",
		"metadata":{"name":%q,"namespace":%q,"labels":{%q:%q}},
		"spec":{"className":"my-vm-class","imageName":"vmi-0a0044d7c690bcbea","storageClass":"my-storage-class",
			"bootstrap":{"cloudInit":{"cloudConfig":{}}},"groupName":%q,
			"affinity":{"vmAntiAffinity":{"requiredDuringSchedulingPreferredDuringExecution":[
				{"labelSelector":{"matchLabels":{%q:%q}},"topologyKey":"kubernetes.io/hostname"}]}}}}`,
		name, benchNamespace, benchGroupLabel, group, group, benchGroupLabel, group)
}

// apiGroupRound creates the round's groups, then its VMs through the API, waits until all
// are PoweredOn, deletes them and waits until all are gone (then deletes the groups).
func (st *benchStack) apiGroupRound(b *testing.B, prefix string, n int) round {
	c := st.api
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code, body, err := c.do("GET", vmsPath, nil)
	if err != nil || code != http.StatusOK {
		b.Fatalf("list VMs: %d %s %v", code, body, err)
	}
	w := newVMWatch(prefix)
	go w.follow(ctx, c, listVersion(b, body))

	names := make([]string, n)
	var groups []string
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", prefix, i)
		if i%benchGroupSize == 0 {
			groups = append(groups, groupOf(prefix, i))
		}
	}
	parallel(b, groups, func(g string) error {
		doc := fmt.Appendf(nil, `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachineGroup","metadata":{"name":%q,"namespace":%q}}`, g, benchNamespace)
		if code, body, err := c.do("POST", vmgsPath, doc); err != nil || code != http.StatusCreated {
			return fmt.Errorf("create group %s: %d %s %v", g, code, body, err)
		}
		return nil
	})

	cpu, work := processCPU(), countsSoFar(b, st.nats)
	started := time.Now()
	r := round{n: n}
	parallel(b, names, func(name string) error {
		i := slices.Index(names, name)
		if code, body, err := c.do("POST", vmsPath, benchGroupVM(name, groupOf(prefix, i))); err != nil || code != http.StatusCreated {
			return fmt.Errorf("create %s: %d %s %v", name, code, body, err)
		}
		return nil
	})
	on := w.waitAll(b, "PoweredOn", names, func(v *watchedVM) time.Time { return v.on }, c)
	r.create = on.Sub(started)
	r.createCPU, r.createWork = processCPU()-cpu, countsSoFar(b, st.nats).minus(work)

	deleteStart, cpu, work := time.Now(), processCPU(), countsSoFar(b, st.nats)
	parallel(b, names, func(name string) error {
		code, body, err := c.do("DELETE", vmsPath+"/"+name, nil)
		if err != nil || (code != http.StatusOK && code != http.StatusAccepted && code != http.StatusNotFound) {
			return fmt.Errorf("delete %s: %d %s %v", name, code, body, err)
		}
		return nil
	})
	gone := w.waitAll(b, "deleted", names, func(v *watchedVM) time.Time { return v.gone }, c)
	r.delete = gone.Sub(deleteStart)
	r.deleteCPU, r.deleteWork = processCPU()-cpu, countsSoFar(b, st.nats).minus(work)
	parallel(b, groups, func(g string) error {
		if code, body, err := c.do("DELETE", vmgsPath+"/"+g, nil); err != nil || code >= 300 && code != http.StatusNotFound {
			return fmt.Errorf("delete group %s: %d %s %v", g, code, body, err)
		}
		return nil
	})
	return r
}

// directPlacement is the baseline of BenchmarkPlacement: the direct path with the zones'
// clusters and hosts, and what each group of the round occupies.
type directPlacement struct {
	*directPath
	root     *object.Folder
	clusters []directCluster

	mu      sync.Mutex
	used    map[string][]types.ManagedObjectReference // hosts by group
	count   map[types.ManagedObjectReference]int      // VMs by host
	members map[string][]types.ManagedObjectReference // VMs by rule and cluster
	locks   map[types.ManagedObjectReference]*sync.Mutex
}

type directCluster struct {
	zone  directZone
	ref   types.ManagedObjectReference
	hosts []types.ManagedObjectReference
}

func newDirectPlacement(b *testing.B, d *directPath) *directPlacement {
	b.Helper()
	ctx := context.Background()
	finder := find.NewFinder(d.c.Client)
	dp := &directPlacement{directPath: d, root: object.NewRootFolder(d.c.Client), locks: map[types.ManagedObjectReference]*sync.Mutex{}}
	for i, z := range inventory.Zones {
		cc, err := finder.ClusterComputeResource(ctx, path.Join("/", inventory.Datacenter, "host", z.Cluster))
		if err != nil {
			b.Fatal(err)
		}
		var m mo.ClusterComputeResource
		if err := cc.Properties(ctx, cc.Reference(), []string{"host"}, &m); err != nil {
			b.Fatal(err)
		}
		dp.clusters = append(dp.clusters, directCluster{zone: d.zones[i], ref: cc.Reference(), hosts: m.Host})
		dp.locks[cc.Reference()] = &sync.Mutex{}
	}
	return dp
}

// round places, creates and powers on n VMs in groups, then removes them.
func (dp *directPlacement) round(b *testing.B, prefix string, n int) round {
	ctx := context.Background()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	dp.used, dp.count, dp.members = map[string][]types.ManagedObjectReference{}, map[types.ManagedObjectReference]int{}, map[string][]types.ManagedObjectReference{}
	vms := make(map[string]placedVM, n)
	var mu sync.Mutex
	cpu := processCPU()
	started := time.Now()
	r := round{n: n}
	parallel(b, names, func(name string) error {
		start := time.Now()
		v, err := dp.placeAndCreate(ctx, name, groupOf(prefix, slices.Index(names, name)))
		if err != nil {
			return err
		}
		mu.Lock()
		vms[name] = v
		r.toOn = append(r.toOn, time.Since(start))
		mu.Unlock()
		return nil
	})
	r.create = time.Since(started)
	r.createCPU = processCPU() - cpu

	deleteStart, cpu := time.Now(), processCPU()
	parallel(b, names, func(name string) error {
		v := vms[name]
		if err := dp.editRule(ctx, v.cluster, v.group, v.vm.Reference(), false); err != nil {
			return err
		}
		return powerOffAndDestroy(ctx, v.vm)
	})
	r.delete = time.Since(deleteStart)
	r.deleteCPU = processCPU() - cpu
	return r
}

type placedVM struct {
	vm      *object.VirtualMachine
	cluster directCluster
	group   string
}

// placeAndCreate chooses a host none of the group's VMs is on (the fewest VMs first), asks
// PlaceVmsXCluster among the zones that have one, deploys there, powers on and joins the
// group's rule.
func (dp *directPlacement) placeAndCreate(ctx context.Context, name, group string) (placedVM, error) {
	// The decision holds the lock through the placement call, as placement holds its
	// namespace's: a group's members decide one at a time.
	dp.mu.Lock()
	var pools []types.ManagedObjectReference
	for _, c := range dp.clusters {
		if slices.ContainsFunc(c.hosts, func(h types.ManagedObjectReference) bool { return !slices.Contains(dp.used[group], h) }) {
			pools = append(pools, c.zone.pool)
		}
	}
	res, err := dp.root.PlaceVmsXCluster(ctx, types.PlaceVmsXClusterSpec{ResourcePools: pools,
		VmPlacementSpecs: []types.PlaceVmsXClusterSpecVmPlacementSpec{{ConfigSpec: types.VirtualMachineConfigSpec{Name: name}}}})
	if err != nil {
		dp.mu.Unlock()
		return placedVM{}, fmt.Errorf("place %s: %w", name, err)
	}
	pool := res.PlacementInfos[0].Recommendation.Action[0].(*types.ClusterClusterInitialPlacementAction).Pool
	i := slices.IndexFunc(dp.clusters, func(c directCluster) bool { return c.zone.pool == pool })
	c := dp.clusters[i]
	var host types.ManagedObjectReference
	for _, h := range c.hosts {
		if !slices.Contains(dp.used[group], h) && (host.Value == "" || dp.count[h] < dp.count[host]) {
			host = h
		}
	}
	dp.used[group] = append(dp.used[group], host)
	dp.count[host]++
	dp.mu.Unlock()

	cs, err := configSpecXML(types.VirtualMachineConfigSpec{
		NumCPUs: benchCPUs, MemoryMB: benchMemoryMB, InstanceUuid: uuid.NewString(), Uuid: uuid.NewString(),
	})
	if err != nil {
		return placedVM{}, err
	}
	ref, err := vcenter.NewManager(dp.rest).DeployLibraryItem(ctx, dp.item, vcenter.Deploy{
		DeploymentSpec: vcenter.DeploymentSpec{
			Name: name, DefaultDatastoreID: c.zone.datastore.Value, AcceptAllEULA: true,
			VmConfigSpec: &vcenter.VmConfigSpec{Provider: "XML", XML: cs},
		},
		Target: vcenter.Target{ResourcePoolID: pool.Value, HostID: host.Value, FolderID: dp.folder.Reference().Value},
	})
	if err != nil {
		return placedVM{}, fmt.Errorf("deploy %s: %w", name, err)
	}
	vm := object.NewVirtualMachine(dp.c.Client, *ref)
	task, err := vm.PowerOn(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return placedVM{}, fmt.Errorf("power on %s: %w", name, err)
	}
	if err := dp.editRule(ctx, c, group, *ref, true); err != nil {
		return placedVM{}, err
	}
	return placedVM{vm: vm, cluster: c, group: group}, nil
}

// editRule adds the VM to (or takes it out of) the group's anti-affinity rule in the
// cluster, as placement keeps its rules: read the rules, write back only a change, a rule
// only for two VMs or more.
func (dp *directPlacement) editRule(ctx context.Context, c directCluster, group string, vm types.ManagedObjectReference, join bool) error {
	lock := dp.locks[c.ref]
	lock.Lock()
	defer lock.Unlock()
	var m mo.ClusterComputeResource
	if err := property.DefaultCollector(dp.c.Client).RetrieveOne(ctx, c.ref, []string{"configurationEx"}, &m); err != nil {
		return err
	}
	name := "direct-" + group
	var rule *types.ClusterAntiAffinityRuleSpec
	for _, r := range m.ConfigurationEx.(*types.ClusterConfigInfoEx).Rule {
		if a, ok := r.(*types.ClusterAntiAffinityRuleSpec); ok && a.Name == name {
			rule = a
		}
	}
	key := name + "/" + c.ref.Value
	dp.mu.Lock()
	if join {
		dp.members[key] = append(dp.members[key], vm)
	} else {
		dp.members[key] = slices.DeleteFunc(dp.members[key], func(r types.ManagedObjectReference) bool { return r == vm })
	}
	members := slices.Clone(dp.members[key])
	dp.mu.Unlock()

	var spec types.ClusterRuleSpec
	switch {
	case rule == nil && len(members) < 2:
		return nil
	case rule == nil:
		spec = types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd},
			Info: &types.ClusterAntiAffinityRuleSpec{Vm: members,
				ClusterRuleInfo: types.ClusterRuleInfo{Name: name, Enabled: types.NewBool(true), Mandatory: types.NewBool(true)}}}
	case len(members) < 2:
		spec = types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: rule.Key}}
	default:
		rule.Vm = members
		spec = types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: rule}
	}
	task, err := object.NewClusterComputeResource(dp.c.Client, c.ref).Reconfigure(ctx, &types.ClusterConfigSpecEx{RulesSpec: []types.ClusterRuleSpec{spec}}, true)
	if err == nil {
		_, err = vmopvc.WaitTask(ctx, task)
	}
	if err != nil {
		return fmt.Errorf("rule %s in %s: %w", name, c.ref.Value, err)
	}
	return nil
}

// listVersion is a list response's resourceVersion.
func listVersion(b *testing.B, body []byte) string {
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		b.Fatal(err)
	}
	return list.Metadata.ResourceVersion
}
