package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// pluralGroups is where VirtualMachineGroups live.
const pluralGroups = "virtualmachinegroups"

// reasonGroupZoneNotFound: a group's zone label names no zone of vCenter.
const reasonGroupZoneNotFound = "GroupZoneNotFound"

var errGroupZone = errors.New("group zone not found")

// vmGroup is a VirtualMachineGroup as placement reads it: its parent and its zone label.
type vmGroup struct {
	name, parent, zone string
}

// groupHead is what placement decodes of a group's record.
type groupHead struct {
	Metadata struct {
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp string            `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		GroupName string `json:"groupName"`
	} `json:"spec"`
}

// groupOf is what placement keeps of a group's record (the reconciler's index): nothing
// of one being deleted or unreadable.
func groupOf(rec events.SpecRecord) (vmGroup, bool) {
	var head groupHead
	if json.Unmarshal(rec.Body, &head) != nil || head.Metadata.DeletionTimestamp != "" {
		return vmGroup{}, false
	}
	return vmGroup{name: rec.Ref.Name, parent: head.Spec.GroupName, zone: head.Metadata.Labels[model.LabelZone]}, true
}

// groups are the namespace's VirtualMachineGroups, by name, from the reconciler's index of
// their records: reading each group's record at every decision made a VM's placement cost
// as much as its namespace has groups.
func (r *reconciler) groups(ctx context.Context, namespace string) (map[string]vmGroup, error) {
	objs, err := r.vmGroups.In(ctx, namespace)
	if err != nil {
		return nil, err
	}
	out := make(map[string]vmGroup, len(objs))
	for _, o := range objs {
		out[o.Ref.Name] = o.Value
	}
	return out, nil
}

// chain is the group named name and its ancestors, nearest first, ending at the first
// missing group or at a cycle.
func chain(groups map[string]vmGroup, name string) []vmGroup {
	var out []vmGroup
	for name != "" {
		g, ok := groups[name]
		if !ok || slices.ContainsFunc(out, func(c vmGroup) bool { return c.name == name }) {
			break
		}
		out = append(out, g)
		name = g.parent
	}
	return out
}

// groupZone is the zone label of the nearest group of the chain carrying one.
func groupZone(c []vmGroup) (zone, from string) {
	for _, g := range c {
		if g.zone != "" {
			return g.zone, g.name
		}
	}
	return "", ""
}

// groupMember is a VM of the group being placed together: a peer, or the VM reconciled.
type groupMember struct {
	peer
	self bool
}

// placeVM places the VM reconciled (id, labels, vm) among the candidate zones, with its
// group (of the namespace's groups) when it is in one (group placement, api-rules §9.3): members of a group go where
// the nearest group labelled with a zone says, and the unplaced VM members of its
// top-most group, nested groups included, are placed together in this one decision, each
// honouring its affinity and those placed before it. The others' zones are recorded as
// their zone labels; their own reconciles then choose their hosts there (with their
// instance storage, and the datastores of their own storage class).
func (r *reconciler) placeVM(ctx context.Context, t *topology, id vmIdentity, specSeq uint64, labels map[string]string, vm *model.VirtualMachine,
	candidates []string, rm room, need instanceNeed, peers []peer, groups map[string]vmGroup) (choice, error) {
	selfPeer := peer{name: id.name, labels: labels, affinity: vm.Spec.Affinity, groupName: vm.Spec.GroupName}
	if vm.Spec.GroupName == "" {
		return r.place(ctx, t, rm, candidates, need, affinityFilters(selfPeer, peers)...)
	}
	mine := chain(groups, vm.Spec.GroupName)
	if gz, from := groupZone(mine); gz != "" && labels[model.LabelZone] == "" {
		if _, ok := t.zones[gz]; !ok {
			return choice{}, fmt.Errorf("%w: group %s's label %s names zone %q, which is not a zone in vCenter (zones: %s)",
				errGroupZone, from, model.LabelZone, gz, strings.Join(t.names, ", "))
		}
		candidates = []string{gz}
	}
	if !decidesForGroup(labels, vm.Spec.GroupName, groups) {
		return r.place(ctx, t, rm, candidates, need, affinityFilters(selfPeer, peers)...)
	}
	root := mine[len(mine)-1].name
	// Another member's decision may have labelled this VM since its record was read: that
	// decision stands (the retry reads the label), and this one would count it elsewhere.
	if latest, err := events.LastSpec(ctx, r.js, events.Ref{Plural: pluralVMs, Namespace: id.namespace, Name: id.name}); err != nil {
		return choice{}, fmt.Errorf("read %s/%s: %w", id.namespace, id.name, err)
	} else if latest.Seq != specSeq {
		return choice{}, fmt.Errorf("%w: %s/%s changed since its reconcile began", events.ErrConflict, id.namespace, id.name)
	}

	members := []groupMember{{peer: selfPeer, self: true}}
	for _, p := range peers {
		if c := chain(groups, p.groupName); !p.deleting && p.zone == "" && len(c) > 0 && c[len(c)-1].name == root {
			members = append(members, groupMember{peer: p})
		}
	}
	slices.SortFunc(members, func(a, b groupMember) int { return strings.Compare(a.name, b.name) })

	// world is every VM as the decision goes: the peers, and the members as they are placed.
	world := append(slices.Clone(peers), selfPeer)
	var mineChoice choice
	decided := map[string]string{}
	for _, m := range members {
		others := slices.DeleteFunc(slices.Clone(world), func(p peer) bool { return p.name == m.name })
		zones := candidates
		if !m.self {
			if gz, _ := groupZone(chain(groups, m.groupName)); gz != "" {
				if _, ok := t.zones[gz]; !ok {
					continue // its own reconcile says why
				}
				zones = []string{gz}
			}
		}
		mine := instanceNeed{} // the others' instance storage is their own reconciles' to place
		if m.self {
			mine = need
		}
		ch, err := r.place(ctx, t, rm, zones, mine, affinityFilters(m.peer, others)...)
		if err != nil {
			if m.self {
				return choice{}, err
			}
			continue // its own reconcile places it, or says why it cannot be
		}
		for i := range world {
			if world[i].name == m.name {
				world[i].zone, world[i].host = ch.zone.name, ch.host.name
			}
		}
		if m.self {
			mineChoice = ch
		} else {
			decided[m.name] = ch.zone.name
		}
	}
	for _, name := range slices.Sorted(maps.Keys(decided)) {
		if err := r.labelMemberZone(ctx, events.Ref{Plural: pluralVMs, Namespace: id.namespace, Name: name}, decided[name]); err != nil {
			return choice{}, err
		}
	}
	mineChoice.how = fmt.Sprintf("with %d member(s) of group %s: %s", len(members), root, mineChoice.how)
	return mineChoice, nil
}

// labelMemberZone records a member's zone decided with its group as its zone label, on its
// latest record (compare-and-swap); a member labelled meanwhile, changed concurrently or
// gone is left to its own reconcile.
func (r *reconciler) labelMemberZone(ctx context.Context, ref events.Ref, zone string) error {
	rec, err := events.LastSpec(ctx, r.js, ref)
	if errors.Is(err, events.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read group member %s: %w", ref, err)
	}
	var head peerHead
	if rec.Op == events.OpDelete || json.Unmarshal(rec.Body, &head) != nil || head.Metadata.DeletionTimestamp != "" ||
		head.Metadata.Labels[model.LabelZone] != "" {
		return nil
	}
	body, err := model.SetMetadataEntry(rec.Body, "labels", model.LabelZone, zone)
	if err != nil {
		return nil // a record placement cannot edit: its own reconcile reports it
	}
	if _, err := events.AppendSpec(ctx, r.js, ref, events.OpPut, body, rec.Seq, nil); err != nil && !errors.Is(err, events.ErrConflict) {
		return fmt.Errorf("set zone label of group member %s: %w", ref, err)
	}
	return nil
}

// decidesForGroup reports whether a VM's placement decides its whole group's zones: it is
// in a group (of groups, whose chain exists) and has no zone label yet, which that
// decision gives every member.
func decidesForGroup(labels map[string]string, groupName string, groups map[string]vmGroup) bool {
	return groupName != "" && labels[model.LabelZone] == "" && len(chain(groups, groupName)) > 0
}
