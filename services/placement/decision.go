package placement

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// Scopes (reconcile.HoldScope) of placement's decisions that span VMs, each held by one
// reconcile at a time over every replica of the service.
const (
	// A namespace's placement decision reads where its other VMs are (affinity, groups)
	// and records where this one goes before the next decision reads them.
	scopeNamespaces = "namespaces"
	// An edit of a cluster's rules and VM groups reads them and writes them back.
	scopeClusters = "clusters"
	// The choice of a host for a VM's instance storage reads what every namespace's VMs
	// recorded on the hosts and records this one's; held inside the VM's namespace.
	scopeInstanceStorage = "instancestorage"
)

// holdNamespace runs f as the namespace's one placement decision at a time.
func (r *reconciler) holdNamespace(ctx context.Context, namespace string, f func(ctx context.Context) error) error {
	return reconcile.HoldScope(ctx, r.js, model.ServicePlacement, scopeNamespaces, namespace, f)
}

// holdInstanceStorage runs f as the one choice of a host for instance storage at a time.
func (r *reconciler) holdInstanceStorage(ctx context.Context, f func(ctx context.Context) error) error {
	return reconcile.HoldScope(ctx, r.js, model.ServicePlacement, scopeInstanceStorage, "hosts", f)
}

// holdCluster runs f as the cluster's one rule edit at a time.
func (r *reconciler) holdCluster(ctx context.Context, cluster string, f func(ctx context.Context) error) error {
	return reconcile.HoldScope(ctx, r.js, model.ServicePlacement, scopeClusters, cluster, f)
}

// preread is what a placement decision reads before it holds the VM's namespace, where
// nothing waits for it: the namespace's groups, and vCenter's room for the VM.
type preread struct {
	groups map[string]vmGroup // nil unless the VM is in a group
	room   room
}

func (r *reconciler) readAhead(ctx context.Context, t *topology, id vmIdentity, vm *model.VirtualMachine, policy storagePolicy) (preread, error) {
	var v preread
	var err error
	if v.room, err = r.readRoom(ctx, t, policy); err != nil {
		return v, err
	}
	if vm.Spec.GroupName != "" {
		v.groups, err = r.groups(ctx, id.namespace)
	}
	return v, err
}

// unplaced reports a placement failure (placementFailure) in the conditions.
func unplaced(conds *conditions, err error) bool {
	reason, ok := placementFailure(err)
	if ok {
		conds.fail(model.ConditionPlacementReady, reason, err.Error())
		conds.fail(model.ConditionCreated, model.ReasonNotReady, "waiting for placement")
	}
	return ok
}

// chooseAndRecord places the VM among the candidate zones and records the decision (in
// the VM's slice, its zone label, or its instance storage) for the namespace's next
// decisions to count; the caller holds the namespace, and read v before. decided is
// false when the reconcile ends here, with the conditions saying why (no place, or
// instance storage recorded first).
func (r *reconciler) chooseAndRecord(ctx context.Context, o reconcile.Object, t *topology, id vmIdentity, vm *model.VirtualMachine,
	cls *class, img *image, candidates []string, v preread, st *model.VirtualMachineStatus, conds *conditions) (ch choice, decided bool, err error) {
	relevant := affinity{self: o.Meta.Labels, spec: vm.Spec.Affinity}.relevant
	if decidesForGroup(o.Meta.Labels, vm.Spec.GroupName, v.groups) {
		// Its decision places the other members of its group too (placeVM), whose
		// affinity needs the hosts of VMs this one's does not.
		relevant = func(peer) bool { return true }
	}
	peers, err := r.peers(ctx, id.namespace, id.name, relevant)
	if err != nil {
		return choice{}, false, err
	}
	need := instanceNeedOf(cls, vm)
	labelled := o.Meta.Labels[model.LabelZone] != ""
	if need.unrecorded() {
		// The host and the instance volumes are recorded first, as the one choice of a host
		// for instance storage at a time (hosts are every namespace's); the record's
		// reconcile creates the VM on that host.
		err = r.holdInstanceStorage(ctx, func(ctx context.Context) error {
			committed, err := r.instanceCommitments(ctx, o.Meta.UID)
			if err != nil {
				return err
			}
			need.committed = committed
			if ch, err = r.placeVM(ctx, t, id, o.Spec.Seq, o.Meta.Labels, vm, candidates, v.room, need, peers, v.groups); err != nil {
				return err
			}
			zone := ""
			if !labelled {
				zone = ch.zone.name
			}
			return r.recordInstanceStorage(ctx, o, vm, cls, ch.host, zone)
		})
		if unplaced(conds, err) { // a placement failure, never the record's
			return choice{}, false, nil
		}
		if err != nil {
			return choice{}, false, err
		}
		conds.ok(model.ConditionPlacementReady)
		conds.fail(model.ConditionCreated, model.ReasonNotReady, "instance storage recorded on host "+ch.host.name)
		// Published before the namespace is let go, as a create's decision is: the
		// namespace's next decision counts the VM on that host.
		st.Zone, st.NodeName = ch.zone.name, ch.host.name
		if err := r.publish(ctx, o, st, conds); err != nil {
			return choice{}, false, err
		}
		return ch, false, nil
	}
	ch, err = r.placeVM(ctx, t, id, o.Spec.Seq, o.Meta.Labels, vm, candidates, v.room, need, peers, v.groups)
	if unplaced(conds, err) {
		return choice{}, false, nil
	}
	if err != nil {
		return choice{}, false, err
	}
	if !labelled {
		if err := r.setZoneLabel(ctx, o, ch.zone.name); err != nil {
			return choice{}, false, err
		}
	}
	conds.put(model.ConditionPlacementReady, metav1.ConditionTrue, model.ReasonTrue,
		fmt.Sprintf("zone %s, host %s (%s)", ch.zone.name, ch.host.name, ch.how))

	// Record the decision and the create before issuing it: a restarted placement then
	// waits for it, and the namespace's next decisions count the VM where it goes.
	st.Zone, st.NodeName = ch.zone.name, ch.host.name
	conds.restart(model.ConditionCreated, "False", model.ReasonCreating,
		fmt.Sprintf("creating from %s %s (%s)%s in zone %s on host %s, datastore %s, with %s",
			img.kind, img.name, img.displayName, cloneMode(img, model.LinkedClone(vm)), ch.zone.name, ch.host.name, ch.datastore.name, ch.policy))
	if err := r.publish(ctx, o, st, conds); err != nil {
		return choice{}, false, err
	}
	return ch, true, nil
}
