package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

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

// peerReads bounds the reads of a namespace's VMs in flight at once.
const peerReads = 16

// headed is a peer as its record says, without where placement put it.
type headed struct {
	peer
	uid string
}

// peers reads the namespace's VMs but self from SPECS, and where placement put those that
// matter to self's affinity (relevant) from placement's slices in STATUS. Placement reads
// them from the streams, never from the gateway: they are the truth the gateway folds too.
// earlier are the VMs as read before the caller took the namespace (readHeads): their
// records are read again only for VMs whose place may have been decided since, by a
// decision of their group (which labels its members' zones) or one that counts for self.
func (r *reconciler) peers(ctx context.Context, namespace, self string, relevant func(peer) bool, earlier []headed) ([]peer, error) {
	kept := map[string]headed{}
	for _, h := range earlier {
		if h.groupName == "" && !relevant(h.peer) {
			kept[h.name] = h
		}
	}
	heads, err := r.readHeads(ctx, namespace, self, kept)
	if err != nil {
		return nil, err
	}
	out := make([]peer, len(heads))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(peerReads)
	for i, h := range heads {
		out[i] = h.peer
		if relevant(h.peer) {
			g.Go(func() (err error) {
				out[i], err = r.readPlacement(gctx, events.Ref{Plural: pluralVMs, Namespace: namespace, Name: h.name}, h.uid, h.peer)
				return err
			})
		}
	}
	return out, g.Wait()
}

// readHeads reads the records of the namespace's VMs but self, in one batched read, those
// in kept taken as they are; deleted and unreadable ones are left out.
func (r *reconciler) readHeads(ctx context.Context, namespace, self string, kept map[string]headed) ([]headed, error) {
	recs, err := events.LastSpecsIn(ctx, r.js, pluralVMs, namespace)
	if err != nil {
		return nil, err
	}
	var out []headed
	for _, rec := range recs {
		if rec.Ref.Name == self {
			continue
		}
		h, ok := kept[rec.Ref.Name]
		if !ok {
			h, ok = headOf(rec)
		}
		if ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// headOf is what placement reads of a VM's record: false for one deleted, missing or
// unreadable.
func headOf(rec events.SpecRecord) (headed, bool) {
	if rec.Op != events.OpPut {
		return headed{}, false
	}
	var head peerHead
	if err := json.Unmarshal(rec.Body, &head); err != nil {
		return headed{}, false // a record no one can read places nothing
	}
	return headed{peer: peer{name: rec.Ref.Name, labels: head.Metadata.Labels, affinity: head.Spec.Affinity, zone: head.Metadata.Labels[model.LabelZone],
		deleting: head.Metadata.DeletionTimestamp != "", groupName: head.Spec.GroupName, uuid: head.Spec.InstanceUUID}, uid: head.Metadata.UID}, true
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
