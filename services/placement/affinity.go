package placement

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vmop/vmop/pkg/model"
)

// Reasons of PlacementReady False that affinity gives.
const (
	// reasonAffinityUnsatisfiable: a required term cannot be met by any host that can take
	// the VM; the VM is not created.
	reasonAffinityUnsatisfiable = "AffinityUnsatisfiable"
	// reasonAffinityInvalid: a required affinity term selects no VM at all, not even this
	// one, so no placement can ever meet it.
	reasonAffinityInvalid = "AffinityInvalid"
)

var (
	errAffinityUnsatisfiable = errors.New("required affinity cannot be met")
	errAffinityInvalid       = errors.New("required affinity selects no VM")
)

// affinity is one VM's spec.affinity evaluated against the other VMs of its namespace.
type affinity struct {
	self  map[string]string // the VM's labels
	spec  *model.AffinitySpec
	peers []peer
	// name and group (spec.groupName) of the VM: which of the peers waiting for a host
	// come before it (see ahead).
	name, group string
}

// term is one affinity term with what it is.
type term struct {
	model.VMAffinityTerm
	anti, required bool
	index          int
}

func (t term) String() string {
	kind, verb := "vmAffinity", "preferredDuringSchedulingPreferredDuringExecution"
	if t.anti {
		kind = "vmAntiAffinity"
	}
	if t.required {
		verb = "requiredDuringSchedulingPreferredDuringExecution"
	}
	return fmt.Sprintf("spec.affinity.%s.%s[%d]", kind, verb, t.index)
}

// terms lists every term of spec, required first.
func terms(spec *model.AffinitySpec) []term {
	if spec == nil {
		return nil
	}
	var out []term
	add := func(ts []model.VMAffinityTerm, anti, required bool) {
		for i, t := range ts {
			out = append(out, term{VMAffinityTerm: t, anti: anti, required: required, index: i})
		}
	}
	if a := spec.VMAffinity; a != nil {
		add(a.RequiredDuringSchedulingPreferredDuringExecution, false, true)
	}
	if a := spec.VMAntiAffinity; a != nil {
		add(a.RequiredDuringSchedulingPreferredDuringExecution, true, true)
	}
	if a := spec.VMAffinity; a != nil {
		add(a.PreferredDuringSchedulingPreferredDuringExecution, false, false)
	}
	if a := spec.VMAntiAffinity; a != nil {
		add(a.PreferredDuringSchedulingPreferredDuringExecution, true, false)
	}
	return out
}

// selector is the term's label selector; an empty one selects nothing (the model's rule).
func (t term) selector() labels.Selector {
	if t.LabelSelector == nil || (len(t.LabelSelector.MatchLabels) == 0 && len(t.LabelSelector.MatchExpressions) == 0) {
		return labels.Nothing()
	}
	s, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err != nil {
		return labels.Nothing() // admission refuses such selectors (AFF-3..5)
	}
	return s
}

// byHost reports whether the term's domain is a host rather than a zone.
func (t term) byHost() bool { return t.TopologyKey == model.TopologyKeyHostname }

// domainOf is the host's domain at the term's topology level.
func (t term) domainOf(h hostCapacity) string {
	if t.byHost() {
		return h.name
	}
	return h.zone
}

func (t term) peerDomain(p peer) string {
	if t.byHost() {
		return p.host
	}
	return p.zone
}

// selected are the peers the term selects, and whether it selects the VM itself.
func (a affinity) selected(t term) (peers []peer, self bool) {
	s := t.selector()
	for _, p := range a.peers {
		if !p.deleting && s.Matches(labels.Set(p.labels)) {
			peers = append(peers, p)
		}
	}
	return peers, s.Matches(labels.Set(a.self))
}

// domains are the distinct domains the placed peers occupy at the term's level.
func (t term) domains(ps []peer) []string {
	set := map[string]bool{}
	for _, p := range ps {
		if p.placed() {
			if d := t.peerDomain(p); d != "" {
				set[d] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// filter is affinity's candidate filter: the hosts meeting every required term, narrowed
// to those meeting the most preferred terms. Errors say which term fails and why.
func (a affinity) filter(hosts []hostCapacity) ([]hostCapacity, error) {
	all := terms(a.spec)
	for _, t := range all {
		if !t.required {
			continue
		}
		sel, self := a.selected(t)
		doms := t.domains(sel)
		if !t.anti && len(doms) == 0 {
			if len(sel) == 0 && !self {
				return nil, fmt.Errorf("%w: %s selects no VM of the namespace, not even this one (selector %s)",
					errAffinityInvalid, t, metav1.FormatLabelSelector(t.LabelSelector))
			}
			continue // the first of its kind: anywhere (the others follow it)
		}
		kept := slices.DeleteFunc(slices.Clone(hosts), func(h hostCapacity) bool {
			return slices.Contains(doms, t.domainOf(h)) == t.anti
		})
		if t.anti && t.byHost() {
			kept = a.reserve(kept, sel)
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("%w: %s: %s", errAffinityUnsatisfiable, t, unmet(t, doms, hosts))
		}
		hosts = kept
	}
	hosts, err := a.keptApartBy(hosts)
	if err != nil {
		return nil, err
	}
	return preferred(hosts, all, a), nil
}

// keptApartBy drops the hosts that placed peers' required anti-affinity terms selecting
// this VM keep it off: anti-affinity holds both ways.
func (a affinity) keptApartBy(hosts []hostCapacity) ([]hostCapacity, error) {
	for _, p := range a.peers {
		if !p.placed() {
			continue
		}
		for _, t := range terms(p.affinity) {
			if !t.required || !t.anti || !t.selector().Matches(labels.Set(a.self)) {
				continue
			}
			dom := t.peerDomain(p)
			kept := slices.DeleteFunc(slices.Clone(hosts), func(h hostCapacity) bool { return t.domainOf(h) == dom })
			if t.byHost() {
				kept = a.reserve(kept, []peer{p})
			}
			if len(kept) == 0 {
				return nil, fmt.Errorf("%w: VM %s's %s keeps this VM off %s, the only place left", errAffinityUnsatisfiable, p.name, t, dom)
			}
			hosts = kept
		}
	}
	return hosts, nil
}

// selects reports whether a term of the VM selects p.
func (a affinity) selects(p peer) bool {
	for _, t := range terms(a.spec) {
		if t.selector().Matches(labels.Set(p.labels)) {
			return true
		}
	}
	return false
}

// relevant reports whether where p is matters to this VM: a term of the VM selects it, or
// a required anti-affinity term of p selects the VM.
func (a affinity) relevant(p peer) bool {
	if a.selects(p) {
		return true
	}
	for _, t := range terms(p.affinity) {
		if t.required && t.anti && t.selector().Matches(labels.Set(a.self)) {
			return true
		}
	}
	return false
}

// affinityFilters are the candidate filters of the VM vm (its name, labels, affinity
// and group) among its namespace's peers.
func affinityFilters(vm peer, peers []peer) []hostFilter {
	return []hostFilter{affinity{self: vm.labels, spec: vm.affinity, peers: peers, name: vm.name, group: vm.groupName}.filter}
}

// reserve drops the hosts of a zone whose peers in a zone (decided with their group, or
// labelled) but not yet on a host, and ahead of this VM, would find no host left apart
// from this VM: each needs one of the zone's free hosts, and which one is theirs to choose.
func (a affinity) reserve(hosts []hostCapacity, peers []peer) []hostCapacity {
	pending := map[string]int{}
	for _, p := range peers {
		if p.placed() && p.host == "" && a.ahead(p) {
			pending[p.zone]++
		}
	}
	free := map[string]int{}
	for _, h := range hosts {
		free[h.zone]++
	}
	return slices.DeleteFunc(hosts, func(h hostCapacity) bool { return pending[h.zone] > 0 && free[h.zone] <= pending[h.zone] })
}

// ahead reports whether the peer p, waiting for a host, has the first claim on one. The
// claims are one order, the same seen from either VM: VMs in a group (decided with it)
// before those in none, groups by name, and within one group (or none) VMs by name.
// Without it, VMs waiting at once in a zone with fewer free hosts than they are would
// each keep the hosts for the others, and none would be placed.
func (a affinity) ahead(p peer) bool {
	if p.groupName != a.group {
		return p.groupName != "" && (a.group == "" || p.groupName < a.group)
	}
	return p.name < a.name
}

// unmet explains why no host is left for a required term.
func unmet(t term, doms []string, hosts []hostCapacity) string {
	level := "zone"
	if t.byHost() {
		level = "host"
	}
	var cands []string
	for _, h := range hosts {
		cands = append(cands, t.domainOf(h))
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	if t.anti {
		return fmt.Sprintf("the VMs it selects already occupy every %s that can take this VM (%s)", level, strings.Join(cands, ", "))
	}
	return fmt.Sprintf("the VMs it selects run in %s %s, where no host can take this VM (candidates: %s)",
		level, strings.Join(doms, ", "), strings.Join(cands, ", "))
}

// preferred keeps the hosts meeting the most preferred terms (all hosts when none has a
// preference over another).
func preferred(hosts []hostCapacity, all []term, a affinity) []hostCapacity {
	type scoredTerm struct {
		t    term
		doms []string
	}
	var prefs []scoredTerm
	for _, t := range all {
		if t.required {
			continue
		}
		sel, _ := a.selected(t)
		if doms := t.domains(sel); len(doms) > 0 {
			prefs = append(prefs, scoredTerm{t, doms})
		}
	}
	if len(prefs) == 0 {
		return hosts
	}
	score := func(h hostCapacity) int {
		n := 0
		for _, p := range prefs {
			if slices.Contains(p.doms, p.t.domainOf(h)) != p.t.anti {
				n++
			}
		}
		return n
	}
	best := 0
	for _, h := range hosts {
		best = max(best, score(h))
	}
	return slices.DeleteFunc(slices.Clone(hosts), func(h hostCapacity) bool { return score(h) < best })
}
