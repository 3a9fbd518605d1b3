package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// peer is another VM of the namespace as affinity sees it: its labels and rules from
// SPECS, where placement put it from its own slice in STATUS (a decision is recorded there
// before the create, so a VM still being created counts where it is going).
type peer struct {
	name      string
	labels    map[string]string
	affinity  *model.AffinitySpec
	zone      string // "" while unplaced; its zone label until placement reports it
	host      string
	moref     string // the VM in vCenter, once placement reported it created
	uuid      string // spec.instanceUUID, which finds the VM in vCenter before that
	deleting  bool
	groupName string
}

// placed reports whether the peer has a place to be counted at.
func (p peer) placed() bool { return p.zone != "" && !p.deleting }

// peerHead is what placement decodes of another VM's record.
type peerHead struct {
	Metadata struct {
		UID               string            `json:"uid"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp string            `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		GroupName    string              `json:"groupName"`
		Affinity     *model.AffinitySpec `json:"affinity"`
		InstanceUUID string              `json:"instanceUUID"`
	} `json:"spec"`
}

// peers reads the namespace's VMs but self from SPECS, and where placement put those that
// matter to self's affinity (relevant) from placement's slices in STATUS. Placement reads
// them from the streams, never from the gateway: they are the truth the gateway folds too.
func (r *reconciler) peers(ctx context.Context, namespace, self string, relevant func(peer) bool) ([]peer, error) {
	subjects, err := events.Subjects(ctx, r.js, events.StreamSpecs, events.NamespaceSpecFilter(pluralVMs, namespace))
	if err != nil {
		return nil, fmt.Errorf("list the VMs of %s: %w", namespace, err)
	}
	var out []peer
	for _, subj := range subjects {
		ref, err := events.ParseSpecSubject(subj)
		if err != nil || ref.Name == self {
			continue
		}
		p, uid, ok, err := r.readPeer(ctx, ref)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if relevant(p) {
			if p, err = r.readPlacement(ctx, ref, uid, p); err != nil {
				return nil, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// readPeer reads a VM's record: false for one deleted or unreadable.
func (r *reconciler) readPeer(ctx context.Context, ref events.Ref) (peer, string, bool, error) {
	rec, err := events.LastSpec(ctx, r.js, ref)
	if errors.Is(err, events.ErrNotFound) {
		return peer{}, "", false, nil
	}
	if err != nil {
		return peer{}, "", false, fmt.Errorf("read VM %s: %w", ref, err)
	}
	if rec.Op == events.OpDelete {
		return peer{}, "", false, nil
	}
	var head peerHead
	if err := json.Unmarshal(rec.Body, &head); err != nil {
		return peer{}, "", false, nil // a record no one can read places nothing
	}
	return peer{name: ref.Name, labels: head.Metadata.Labels, affinity: head.Spec.Affinity, zone: head.Metadata.Labels[model.LabelZone],
		deleting: head.Metadata.DeletionTimestamp != "", groupName: head.Spec.GroupName, uuid: head.Spec.InstanceUUID}, head.Metadata.UID, true, nil
}

// readPlacement adds where placement put the VM, or decided to put it, from its slice of
// the same incarnation. The STATUS stream's leader answers: a follower may not have the
// decision another replica recorded just before it let the namespace go.
func (r *reconciler) readPlacement(ctx context.Context, ref events.Ref, uid string, p peer) (peer, error) {
	s, err := events.LastStatusFromLeader(ctx, r.js, ref, model.ServicePlacement)
	if errors.Is(err, events.ErrNotFound) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("read placement of VM %s: %w", ref, err)
	}
	if s.Slice.UID != uid {
		return p, nil // an earlier incarnation's slice
	}
	var st model.VirtualMachineStatus
	if err := json.Unmarshal(s.Slice.Status, &st); err == nil && st.Zone != "" {
		p.zone, p.host, p.moref = st.Zone, st.NodeName, st.UniqueID
	}
	return p, nil
}
