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
	rec    events.SpecRecord // its latest record; Seq is the CAS base of a write
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
	if err := json.Unmarshal(rec.Body, &m.head); err != nil {
		m.bad = fmt.Errorf("decode %s: %w", key, err)
		return m, nil
	}
	m.found = m.head.Metadata.DeletionTimestamp == ""
	return m, nil
}

// members are the group's boot-order members in order, then the objects of its namespace
// that name the group without being listed, sorted by kind and name.
func members(ctx context.Context, js jetstream.JetStream, ns string, g *model.VirtualMachineGroup) ([]member, error) {
	all := map[memberKey]member{}
	for _, kind := range []string{model.GroupMemberKindVirtualMachine, model.GroupMemberKindVirtualMachineGroup} {
		subjects, err := events.Subjects(ctx, js, events.StreamSpecs, events.NamespaceSpecFilter(pluralOf[kind], ns))
		if err != nil {
			return nil, fmt.Errorf("list %s in %s: %w", pluralOf[kind], ns, err)
		}
		for _, subj := range subjects {
			ref, err := events.ParseSpecSubject(subj)
			if err != nil {
				continue
			}
			key := memberKey{Kind: kind, Name: ref.Name}
			m, err := readMember(ctx, js, key, ref)
			if err != nil {
				return nil, err
			}
			all[key] = m
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
