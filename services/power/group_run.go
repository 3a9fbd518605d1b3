package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

const groupWorkers = 4

// runGroups reconciles VirtualMachineGroups until ctx ends: a loop of its own beside the
// VMs' one, publishing power's slice of each group. A change of a VM's or group's spec (a
// member joining, leaving, being created) reconciles the groups it concerns
// (memberIndex.relate), and so does a new power or placement slice of a member (its
// observed power state, a nested group's Ready, where it is placed).
func runGroups(ctx context.Context, js jetstream.JetStream, log *slog.Logger) error {
	if err := events.Setup(ctx, js); err != nil {
		return fmt.Errorf("set up streams: %w", err)
	}
	r := &groupReconciler{js: js, index: newMemberIndex(js), log: log.With("service", model.ServicePower, "kind", "VirtualMachineGroup")}
	cfg := groupsConfig(log)
	cfg.Relate = r.index.relate
	trigger := reconcile.NewTrigger(js, cfg, r.reconcile)
	r.requestAt = trigger.RequestAt

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched := make(chan error, 1)
	go func() {
		err := watchMembers(ctx, js, trigger)
		cancel() // the loop without the watch would leave members' states stale
		watched <- err
	}()
	err := trigger.Run(ctx)
	cancel()
	err = errors.Join(err, <-watched)
	trigger.Wait()
	return err
}

func groupsConfig(log *slog.Logger) reconcile.Config {
	return reconcile.Config{
		Service: model.ServicePower, Durable: model.ServicePower + "-groups", Plural: groupPlural,
		Workers: groupWorkers, Related: []string{plural, groupPlural}, Resync: resyncEvery, Logger: log,
	}
}

// membersDurable is the consumer of the power slices that may concern a group.
var membersDurable = events.Durable(model.ServicePower + "-group-members")

// groupRequester asks for a reconcile of one group.
type groupRequester interface {
	Request(ctx context.Context, ref events.Ref)
}

// watchMembers requests a reconcile of a member's group for every slice power publishes
// about a VM or group that names a group, and every slice placement publishes about a VM.
func watchMembers(ctx context.Context, js jetstream.JetStream, req groupRequester) error {
	return events.Consume(ctx, js, events.ConsumerConfig{
		Stream: events.StreamStatus, Durable: membersDurable,
		FilterSubjects: []string{events.ServiceStatusFilter(plural, model.ServicePower), events.ServiceStatusFilter(groupPlural, model.ServicePower),
			events.ServiceStatusFilter(plural, model.ServicePlacement)}, // a member's placement (group_placement.go)
		Workers: groupWorkers,
	}, nil, func(ctx context.Context, msg jetstream.Msg) error {
		ref, _, err := events.ParseStatusSubject(msg.Subject())
		if err != nil {
			return fmt.Errorf("%w: %v", events.ErrPermanent, err)
		}
		rec, err := events.LastSpec(ctx, js, ref)
		if errors.Is(err, events.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var head struct {
			Spec struct {
				GroupName string `json:"groupName"`
			} `json:"spec"`
		}
		if rec.Op == events.OpDelete || json.Unmarshal(rec.Body, &head) != nil || head.Spec.GroupName == "" {
			return nil
		}
		req.Request(ctx, events.Ref{Plural: groupPlural, Namespace: ref.Namespace, Name: head.Spec.GroupName})
		return nil
	})
}
