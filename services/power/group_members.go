package power

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

const groupPlural = "virtualmachinegroups"

// pluralOf is where objects of a member kind live.
var pluralOf = map[string]string{
	model.GroupMemberKindVirtualMachine:      plural,
	model.GroupMemberKindVirtualMachineGroup: groupPlural,
}

// member is one object a group lists in its boot order or that names the group.
type member struct {
	key    memberKey
	ref    events.Ref
	rec    events.SpecRecord // its latest record once read whole (readMember); Seq is the CAS base of a write
	found  bool              // it exists and is not being deleted
	head   memberHead
	listed bool  // in the group's boot order
	bad    error // its record cannot be read
}

// memberHead is what the group reads of a VM or group member.
type memberHead struct {
	Metadata struct {
		UID               string                  `json:"uid"`
		DeletionTimestamp string                  `json:"deletionTimestamp"`
		Annotations       map[string]string       `json:"annotations"`
		OwnerReferences   []metav1.OwnerReference `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		GroupName    string            `json:"groupName"`
		PowerState   model.PowerState  `json:"powerState"`
		PowerOffMode model.PowerOpMode `json:"powerOffMode"`
		SuspendMode  model.PowerOpMode `json:"suspendMode"`
		// A group member's own boot order (memberIndex keeps it as indexedMember.listed).
		BootOrder []model.VirtualMachineGroupBootOrderGroup `json:"bootOrder"`
	} `json:"spec"`
}

// readMember reads ref's latest record.
func readMember(ctx context.Context, js jetstream.JetStream, key memberKey, ref events.Ref) (member, error) {
	m := member{key: key, ref: ref}
	rec, err := events.LastSpec(ctx, js, ref)
	if errors.Is(err, events.ErrNotFound) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("read member %s: %w", key, err)
	}
	m.rec = rec
	if rec.Op == events.OpDelete {
		return m, nil
	}
	m.head, m.bad = decodeMemberHead(key, rec.Body)
	m.found = m.bad == nil && m.head.Metadata.DeletionTimestamp == ""
	return m, nil
}

func decodeMemberHead(key memberKey, body []byte) (memberHead, error) {
	var head memberHead
	if err := json.Unmarshal(body, &head); err != nil {
		return memberHead{}, fmt.Errorf("decode %s: %w", key, err)
	}
	return head, nil
}

// memberIndex keeps the heads of a namespace's possible members, VMs and groups, in
// memory (events.SpecIndex): reading every record of the namespace at each group
// reconcile made a group cost as much as its namespace is large, and n VMs in groups n².
// It keeps no bodies: a member is read whole only to be written (member.write).
type memberIndex map[string]*events.SpecIndex[indexedMember]

// indexedMember is what the index keeps of a record.
type indexedMember struct {
	head   memberHead
	bad    error
	listed map[memberKey]bool // a group's boot-order members
}

func newMemberIndex(js jetstream.JetStream) memberIndex {
	x := memberIndex{}
	for kind, plural := range pluralOf {
		x[kind] = events.NewSpecIndex(js, plural, func(rec events.SpecRecord) (indexedMember, bool) {
			head, bad := decodeMemberHead(memberKey{Kind: kind, Name: rec.Ref.Name}, rec.Body)
			// Of the annotations the group reads one; kubectl's last-applied copy alone
			// would make the index as large as the records.
			if at, ok := head.Metadata.Annotations[model.AnnotationApplyPowerStateTime]; ok {
				head.Metadata.Annotations = map[string]string{model.AnnotationApplyPowerStateTime: at}
			} else {
				head.Metadata.Annotations = nil
			}
			m := indexedMember{head: head, bad: bad, listed: bootMembers(head.Spec.BootOrder)}
			m.head.Spec.BootOrder = nil // kept as listed
			return m, true
		})
	}
	return x
}

// relate names the groups a change of a VM's or group's record concerns (the groups'
// reconcile.Config.Relate): the one it names, those it carries an owner reference of
// (one it named before: the group's write added it), and those whose boot order lists
// it; no other group reads it. A deletion, or a record that cannot be read, concerns
// every group of the namespace.
func (x memberIndex) relate(ctx context.Context, rec events.SpecRecord) (names []string, all bool, err error) {
	kind := model.GroupMemberKindVirtualMachine
	if rec.Ref.Plural == groupPlural {
		kind = model.GroupMemberKindVirtualMachineGroup
	}
	key := memberKey{Kind: kind, Name: rec.Ref.Name}
	if rec.Op != events.OpPut {
		return nil, true, nil
	}
	head, err := decodeMemberHead(key, rec.Body)
	if err != nil {
		return nil, true, nil
	}
	if head.Spec.GroupName != "" {
		names = append(names, head.Spec.GroupName)
	}
	for _, ref := range head.Metadata.OwnerReferences {
		if ref.Kind == model.GroupMemberKindVirtualMachineGroup {
			names = append(names, ref.Name)
		}
	}
	listing, err := x[model.GroupMemberKindVirtualMachineGroup].Where(ctx, rec.Ref.Namespace,
		func(g events.Indexed[indexedMember]) bool { return g.Value.listed[key] })
	if err != nil {
		return nil, false, err
	}
	for _, g := range listing {
		names = append(names, g.Ref.Name)
	}
	slices.Sort(names)
	return slices.Compact(names), false, nil
}

// bootMembers are the members a group's boot order lists.
func bootMembers(order []model.VirtualMachineGroupBootOrderGroup) map[memberKey]bool {
	var out map[memberKey]bool // nil for a VM: the index keeps one per record
	for _, step := range order {
		for _, gm := range step.Members {
			if out == nil {
				out = map[memberKey]bool{}
			}
			out[keyOf(gm)] = true
		}
	}
	return out
}

// members are the group's boot-order members in order, then the objects of its namespace
// that name the group without being listed, sorted by kind and name.
func (x memberIndex) members(ctx context.Context, ns string, g *model.VirtualMachineGroup) ([]member, error) {
	boot := bootMembers(g.Spec.BootOrder)
	all := map[memberKey]member{}
	for _, kind := range []string{model.GroupMemberKindVirtualMachine, model.GroupMemberKindVirtualMachineGroup} {
		objs, err := x[kind].Where(ctx, ns, func(o events.Indexed[indexedMember]) bool {
			return o.Value.head.Spec.GroupName == g.Name || boot[memberKey{Kind: kind, Name: o.Ref.Name}]
		})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			key := memberKey{Kind: kind, Name: o.Ref.Name}
			all[key] = member{key: key, ref: o.Ref, head: o.Value.head, bad: o.Value.bad,
				found: o.Value.bad == nil && o.Value.head.Metadata.DeletionTimestamp == ""}
		}
	}

	var out []member
	listed := map[memberKey]bool{}
	for _, step := range g.Spec.BootOrder {
		for _, gm := range step.Members {
			key := keyOf(gm)
			if listed[key] || pluralOf[key.Kind] == "" {
				continue
			}
			listed[key] = true
			m, ok := all[key]
			if !ok {
				m = member{key: key, ref: events.Ref{Plural: pluralOf[key.Kind], Namespace: ns, Name: key.Name}}
			}
			m.listed = true
			out = append(out, m)
		}
	}
	var unlisted []member
	for key, m := range all {
		if !listed[key] && m.found && m.head.Spec.GroupName == g.Name && !(key.Kind == model.GroupMemberKindVirtualMachineGroup && key.Name == g.Name) {
			unlisted = append(unlisted, m)
		}
	}
	slices.SortFunc(unlisted, func(a, b member) int {
		return cmp.Or(cmp.Compare(a.key.Kind, b.key.Kind), cmp.Compare(a.key.Name, b.key.Name))
	})
	return append(out, unlisted...), nil
}
