package placement

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"go.opentelemetry.io/otel/attribute"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// Cluster rules keep affinity at run time, where DRS moves VMs inside a zone's cluster:
//   - host anti-affinity becomes ClusterAntiAffinityRuleSpecs (DRS keeps a rule's VMs on
//     different hosts; it needs two VMs to exist). A term keeps the VM declaring it apart
//     from each VM it selects, not those VMs from each other, so a rule holds a pair: the
//     VM and one it selects. Where a rule can hold more, it does: the VMs that declare one
//     term and are selected by it (the seed's VMs of a tier kept apart from each other)
//     are all apart pairwise, so they share the term's one rule;
//   - zone affinity becomes a ClusterVmGroup of the VMs of the term bound by a
//     ClusterVmHostRuleInfo to a ClusterHostGroup of the zone's hosts (DRS keeps them in
//     the zone).
//
// Anti-affinity holds both ways: a VM created after one whose required term selects it
// joins that pair's rule too. Zone anti-affinity needs no rule: its VMs are in different
// clusters, and DRS moves VMs only inside one. Required terms make mandatory rules,
// preferred ones advisory rules. The rules are named after the namespace and the term
// (and the pair's VMs), so every VM declaring the same term shares the term's rule; a VM
// leaves its rules before it is destroyed, and a rule goes with the last VM it needs.

// rulePrefix starts the name of every cluster rule and group vmop makes.
const rulePrefix = "vmop-"

// clusterRule is the rule one term asks for in one cluster.
type clusterRule struct {
	name      string
	anti      bool // host anti-affinity; else zone affinity
	mandatory bool
}

// hostGroup and vmGroup name the groups of a zone affinity rule.
func (c clusterRule) vmGroup() string   { return c.name + "-vms" }
func (c clusterRule) hostGroup() string { return c.name + "-hosts" }

// ruleOf is the cluster rule of a term of a VM in namespace, false for a term that needs
// none (zone anti-affinity).
func ruleOf(namespace string, t term) (clusterRule, bool) {
	anti := t.anti && t.byHost()
	if t.anti && !anti {
		return clusterRule{}, false
	}
	key := fmt.Sprintf("%s|%t|%t|%s|%s", namespace, t.anti, t.required, t.TopologyKey, metav1.FormatLabelSelector(t.LabelSelector))
	sum := sha256.Sum256([]byte(key))
	return clusterRule{name: rulePrefix + namespace + "-" + hex.EncodeToString(sum[:5]), anti: anti, mandatory: t.required}, true
}

// pair is the rule keeping the VMs named a and b apart for the anti-affinity term of
// c: the same whichever of the two asks.
func (c clusterRule) pair(a, b string) clusterRule {
	if b < a {
		a, b = b, a
	}
	sum := sha256.Sum256([]byte(c.name + "|" + a + "|" + b))
	// 8 bytes: two pairs of one term sharing a name would become one rule of four VMs.
	return clusterRule{name: c.name + "-" + hex.EncodeToString(sum[:8]), anti: true, mandatory: c.mandatory}
}

// ruleNames are the names of the rules of spec's terms.
func ruleNames(namespace string, spec *model.AffinitySpec) map[string]bool {
	out := map[string]bool{}
	for _, t := range terms(spec) {
		if r, ok := ruleOf(namespace, t); ok {
			out[r.name] = true
		}
	}
	return out
}

// ensureRules puts the created VM (named name, moref vm, in zone z) into the cluster
// rules of its terms, with the VMs each term selects that run in that zone (inZone, by
// name), and into the pair rules of those VMs' required host anti-affinity terms that
// select it; it changes nothing already right, so a repeated reconcile reconfigures
// nothing.
func (r *reconciler) ensureRules(ctx context.Context, namespace, name string, self map[string]string, spec *model.AffinitySpec,
	z zone, vm types.ManagedObjectReference, peers []peer, inZone map[string]types.ManagedObjectReference) error {
	want := map[clusterRule][]types.ManagedObjectReference{}
	a := affinity{self: self, spec: spec, peers: peers}
	own := ruleNames(namespace, spec)
	for _, t := range terms(spec) {
		rule, ok := ruleOf(namespace, t)
		if !ok {
			continue
		}
		sel, selfSelected := a.selected(t)
		for _, p := range sel {
			ref, ok := inZone[p.name]
			switch {
			case !ok:
			case rule.anti && !(selfSelected && ruleNames(namespace, p.affinity)[rule.name]):
				pair := rule.pair(name, p.name)
				want[pair] = append(want[pair], vm, ref)
			default:
				want[rule] = append(want[rule], vm, ref)
			}
		}
	}
	for _, p := range peers {
		ref, ok := inZone[p.name]
		if !ok || p.deleting {
			continue
		}
		for _, t := range terms(p.affinity) {
			rule, ok := ruleOf(namespace, t)
			if !ok || !rule.anti || !t.required || !t.selector().Matches(labels.Set(self)) {
				continue
			}
			if own[rule.name] && t.selector().Matches(labels.Set(p.labels)) {
				continue // both declare the term and are selected by it: its one rule, above
			}
			pair := rule.pair(name, p.name)
			want[pair] = append(want[pair], ref, vm)
		}
	}
	if len(want) == 0 {
		return nil
	}
	return r.holdCluster(ctx, z.cluster.Value, func(ctx context.Context) error {
		cfg, err := r.clusterConfig(ctx, z)
		if err != nil {
			return err
		}
		var spec types.ClusterConfigSpecEx
		for rule, members := range want {
			addRule(&spec, cfg, z, rule, members)
		}
		return r.reconfigureCluster(ctx, z, spec)
	})
}

// leaveRules takes the VM out of every vmop rule and VM group of its zone's cluster,
// removing those that no longer have the VMs they need.
func (r *reconciler) leaveRules(ctx context.Context, z zone, vm types.ManagedObjectReference) error {
	return r.holdCluster(ctx, z.cluster.Value, func(ctx context.Context) error { return r.leaveRulesHeld(ctx, z, vm) })
}

// leaveRulesHeld is leaveRules holding the cluster.
func (r *reconciler) leaveRulesHeld(ctx context.Context, z zone, vm types.ManagedObjectReference) error {
	cfg, err := r.clusterConfig(ctx, z)
	if err != nil {
		return err
	}
	var spec types.ClusterConfigSpecEx
	for _, base := range cfg.Rule {
		info, ok := base.(*types.ClusterAntiAffinityRuleSpec)
		if !ok || !strings.HasPrefix(info.Name, rulePrefix) || !slices.Contains(info.Vm, vm) {
			continue
		}
		left := slices.DeleteFunc(slices.Clone(info.Vm), func(m types.ManagedObjectReference) bool { return m == vm })
		if len(left) < 2 {
			spec.RulesSpec = append(spec.RulesSpec, removeRule(info.Key))
			continue
		}
		edited := *info
		edited.Vm = left
		spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{
			ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: &edited})
	}
	for _, base := range cfg.Group {
		g, ok := base.(*types.ClusterVmGroup)
		if !ok || !strings.HasPrefix(g.Name, rulePrefix) || !slices.Contains(g.Vm, vm) {
			continue
		}
		left := slices.DeleteFunc(slices.Clone(g.Vm), func(m types.ManagedObjectReference) bool { return m == vm })
		if len(left) > 0 {
			edited := *g
			edited.Vm = left
			spec.GroupSpec = append(spec.GroupSpec, types.ClusterGroupSpec{
				ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: &edited})
			continue
		}
		// The last VM: the VM-host rule and both groups go.
		name := strings.TrimSuffix(g.Name, "-vms")
		for _, rb := range cfg.Rule {
			if ri := rb.GetClusterRuleInfo(); ri.Name == name {
				spec.RulesSpec = append(spec.RulesSpec, removeRule(ri.Key))
			}
		}
		spec.GroupSpec = append(spec.GroupSpec, removeGroup(g.Name), removeGroup(name+"-hosts"))
	}
	return r.reconfigureCluster(ctx, z, spec)
}

// addRule adds to spec what makes rule hold over members in the cluster whose
// configuration is cfg: members already in it stay (they leave on their own delete).
func addRule(spec *types.ClusterConfigSpecEx, cfg *types.ClusterConfigInfoEx, z zone, rule clusterRule, members []types.ManagedObjectReference) {
	existing := findRule(cfg, rule.name)
	if rule.anti {
		var info types.ClusterAntiAffinityRuleSpec
		op := types.ArrayUpdateOperationAdd
		if e, ok := existing.(*types.ClusterAntiAffinityRuleSpec); ok {
			info, op = *e, types.ArrayUpdateOperationEdit
		}
		vms, changed := union(info.Vm, members)
		if !changed || len(vms) < 2 {
			return // DRS needs two VMs to keep apart
		}
		info.Name, info.Enabled, info.Mandatory, info.Vm = rule.name, types.NewBool(true), types.NewBool(rule.mandatory), vms
		spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: op}, Info: &info})
		return
	}
	var group types.ClusterVmGroup
	op := types.ArrayUpdateOperationAdd
	for _, g := range cfg.Group {
		if e, ok := g.(*types.ClusterVmGroup); ok && e.Name == rule.vmGroup() {
			group, op = *e, types.ArrayUpdateOperationEdit
		}
	}
	vms, changed := union(group.Vm, members)
	if changed {
		group.Name, group.Vm = rule.vmGroup(), vms
		spec.GroupSpec = append(spec.GroupSpec, types.ClusterGroupSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: op}, Info: &group})
	}
	if existing != nil {
		return
	}
	if !slices.ContainsFunc(cfg.Group, func(g types.BaseClusterGroupInfo) bool { return g.GetClusterGroupInfo().Name == rule.hostGroup() }) {
		spec.GroupSpec = append(spec.GroupSpec, types.ClusterGroupSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd},
			Info: &types.ClusterHostGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: rule.hostGroup()}, Host: z.hosts}})
	}
	spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd},
		Info: &types.ClusterVmHostRuleInfo{
			ClusterRuleInfo: types.ClusterRuleInfo{Name: rule.name, Enabled: types.NewBool(true), Mandatory: types.NewBool(rule.mandatory)},
			VmGroupName:     rule.vmGroup(), AffineHostGroupName: rule.hostGroup()}})
}

func findRule(cfg *types.ClusterConfigInfoEx, name string) types.BaseClusterRuleInfo {
	for _, r := range cfg.Rule {
		if r.GetClusterRuleInfo().Name == name {
			return r
		}
	}
	return nil
}

// union is have with the members it lacks, and whether it lacked any.
func union(have, members []types.ManagedObjectReference) ([]types.ManagedObjectReference, bool) {
	out := slices.Clone(have)
	for _, m := range members {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, len(out) > len(have)
}

func removeRule(key int32) types.ClusterRuleSpec {
	return types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: key}}
}

func removeGroup(name string) types.ClusterGroupSpec {
	return types.ClusterGroupSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: name}}
}

// clusterConfig reads the zone's cluster's rules and groups.
func (r *reconciler) clusterConfig(ctx context.Context, z zone) (*types.ClusterConfigInfoEx, error) {
	var cc mo.ClusterComputeResource
	if err := property.DefaultCollector(r.vc.c.Client).RetrieveOne(ctx, z.cluster, []string{"configurationEx"}, &cc); err != nil {
		return nil, fmt.Errorf("rules of the cluster of zone %s: %w", z.name, err)
	}
	cfg, ok := cc.ConfigurationEx.(*types.ClusterConfigInfoEx)
	if !ok {
		return nil, fmt.Errorf("cluster of zone %s has no ClusterConfigInfoEx", z.name)
	}
	return cfg, nil
}

// reconfigureCluster applies spec, when it changes anything, and waits for it.
func (r *reconciler) reconfigureCluster(ctx context.Context, z zone, spec types.ClusterConfigSpecEx) error {
	if len(spec.RulesSpec) == 0 && len(spec.GroupSpec) == 0 {
		return nil
	}
	err := traced(ctx, spanClusterRules, func(ctx context.Context) error {
		task, err := object.NewClusterComputeResource(r.vc.c.Client, z.cluster).Reconfigure(ctx, &spec, true)
		if err != nil {
			return err
		}
		_, err = vcenter.WaitTask(ctx, task)
		return err
	}, attribute.String("vcenter.cluster", z.cluster.Value))
	if err != nil {
		return fmt.Errorf("cluster rules of zone %s: %w", z.name, err)
	}
	return nil
}

// keepRules puts a created VM into the cluster rules of its affinity terms and of the
// other VMs' required anti-affinity terms selecting it, with the VMs concerned found in
// vCenter (by the moref placement reported, else by instance UUID: a VM created at the
// same time may not have reported yet, and whichever of two such VMs keeps its rules last
// finds the other: so even a VM without terms reads its namespace's VMs afresh here).
// The slice reporting the VM created is published only after, so a VM reported created
// has its rules (rulesKept).
func (r *reconciler) keepRules(ctx context.Context, t *topology, id vmIdentity, vm *model.VirtualMachine, st *model.VirtualMachineStatus) error {
	z, ok := t.zones[st.Zone]
	if !ok || st.UniqueID == "" {
		return nil
	}
	a := affinity{self: vm.Labels, spec: vm.Spec.Affinity}
	peers, err := r.peers(ctx, id.namespace, id.name, a.relevant)
	if err != nil {
		return err
	}
	a.peers = peers
	inZone := map[string]types.ManagedObjectReference{}
	for _, p := range peers {
		if !p.placed() || p.zone != z.name || !a.relevant(p) {
			continue
		}
		v, err := r.read(ctx, p.moref, p.uuid, false)
		if err != nil {
			return fmt.Errorf("find VM %s for the cluster rules of %s/%s: %w", p.name, id.namespace, id.name, err)
		}
		if v != nil && v.pool != nil && t.poolZone[*v.pool] == z.name {
			inZone[p.name] = v.ref
		}
	}
	return r.ensureRules(ctx, id.namespace, id.name, vm.Labels, vm.Spec.Affinity, z,
		types.ManagedObjectReference{Type: "VirtualMachine", Value: st.UniqueID}, peers, inZone)
}

// rulesKept reports whether prev already reported the VM created (after keepRules).
func rulesKept(prev model.VirtualMachineStatus, moref string) bool {
	for _, c := range prev.Conditions {
		if c.Type == model.ConditionCreated {
			return c.Status == metav1.ConditionTrue && prev.UniqueID == moref
		}
	}
	return false
}

// leaveZoneRules takes a VM about to be destroyed out of the rules of its zone's cluster
// (the zone of its pool, else the one last reported).
func (r *reconciler) leaveZoneRules(ctx context.Context, t *topology, v *vmState, reported string) error {
	name := reported
	if v.pool != nil {
		if z, ok := t.poolZone[*v.pool]; ok {
			name = z
		}
	}
	z, ok := t.zones[name]
	if !ok {
		return nil
	}
	return r.leaveRules(ctx, z, v.ref)
}
