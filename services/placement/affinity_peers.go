package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

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
		Annotations       map[string]string `json:"annotations"`
		DeletionTimestamp string            `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		GroupName    string                       `json:"groupName"`
		Affinity     *model.AffinitySpec          `json:"affinity"`
		InstanceUUID string                       `json:"instanceUUID"`
		Volumes      []model.VirtualMachineVolume `json:"volumes"`
	} `json:"spec"`
}

// peerReads bounds the reads of a namespace's VMs in flight at once.
const peerReads = 16

// headed is a peer as its record says, without where placement put it.
type headed struct {
	peer
	uid string
	// instance is the instance storage recorded for the VM on a host (instance_storage.go).
	instance instanceCommitment
}

// peers are the namespace's VMs but self, as their records say (the reconciler's index of
// SPECS, current when read), with where placement put those that matter to self's
// affinity (relevant) from placement's slices in STATUS. Placement reads them from the
// streams, never from the gateway: they are the truth the gateway folds too.
func (r *reconciler) peers(ctx context.Context, namespace, self string, relevant func(peer) bool) ([]peer, error) {
	vms, err := r.vms.In(ctx, namespace)
	if err != nil {
		return nil, err
	}
	vms = slices.DeleteFunc(vms, func(vm events.Indexed[headed]) bool { return vm.Ref.Name == self })
	out := make([]peer, len(vms))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(peerReads)
	for i, vm := range vms {
		h := vm.Value
		out[i] = h.peer
		if relevant(h.peer) {
			g.Go(func() (err error) {
				out[i], err = r.readPlacement(gctx, vm.Ref, h.uid, h.peer)
				return err
			})
		}
	}
	return out, g.Wait()
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
		deleting: head.Metadata.DeletionTimestamp != "", groupName: head.Spec.GroupName, uuid: head.Spec.InstanceUUID}, uid: head.Metadata.UID,
		instance: committedBy(head.Metadata.Annotations, head.Spec.Volumes)}, true
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
