// Package placement chooses where a VirtualMachine runs (zone, host, datastore), creates it
// in vCenter from its image and class, and destroys it on delete.
//
// Run is the whole service; the stack binary wires it with configuration. One reconcile
// resolves the class and the image, places the VM, makes it powered off (a content library
// deploy of an OVF or VM template item, a clone of a template VM, or an empty VM for an ISO
// image) and reports the placement slice of .status;
// every step first looks at vCenter, so a redelivered or repeated reconcile finds the VM
// the earlier one made instead of making another.
package placement

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// Config is what the service needs.
type Config struct {
	JetStream jetstream.JetStream
	VCenter   vcenter.Endpoint // the SDK endpoint with user:password, and how to trust it
	Logger    *slog.Logger
}

// Plurals of the kinds the service reads.
const (
	pluralVMs            = "virtualmachines"
	pluralClasses        = "virtualmachineclasses"
	pluralImages         = "virtualmachineimages"
	pluralClusterImages  = "clustervirtualmachineimages"
	pluralStorageClasses = "storageclasses"
)

const (
	workers = 8
	// resyncEvery re-reconciles every VM for what no event announces: an image's status
	// arriving after its spec, a VM changed in vCenter, a retry the related fan-out dropped.
	resyncEvery = time.Minute
	// createGrace is how long a create recorded in the previous slice (Created False
	// Creating) whose VM cannot be found by its instance UUID is trusted to still run in
	// vCenter: until then placement waits for it; after, it looks for the VM by name (a
	// create that stopped half way, to adopt) and issues the create again only when there
	// is none. A real vCenter refuses a second VM of that name in the folder anyway.
	createGrace = 15 * time.Second
)

// Run reconciles VirtualMachines until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.VCenter.URL == nil {
		return errors.New("placement: no vCenter URL")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	vc, err := openSession(ctx, cfg.VCenter)
	if err != nil {
		return fmt.Errorf("placement: %w", err)
	}
	defer vc.close()
	if err := events.Setup(ctx, cfg.JetStream); err != nil {
		return fmt.Errorf("placement: set up streams: %w", err)
	}
	r := newReconciler(cfg.JetStream, vc)
	rc := loopConfig(cfg.Logger)
	trig := reconcile.NewTrigger(cfg.JetStream, rc, r.reconcile)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() { errc <- trig.Run(ctx) }()
	go func() { errc <- watchImageStatus(ctx, cfg.JetStream, trig) }()
	var first error
	for range 2 {
		if err := <-errc; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

func loopConfig(log *slog.Logger) reconcile.Config {
	return reconcile.Config{
		Service: model.ServicePlacement, Plural: pluralVMs, Workers: workers,
		Related: []string{pluralClasses, pluralImages, pluralClusterImages, pluralStorageClasses,
			pluralComputePolicies, pluralTagPolicies},
		Resync: resyncEvery, Concern: concern, Logger: log,
		ReportsPause: true, // pkg/reconcile skips paused VMs in every service; placement says so
	}
}

// Access is what placement does on NATS, which its identity is allowed: its consumers,
// and appending to VirtualMachines' SPECS (the zone label it chooses).
func Access() events.ServiceAccess {
	return events.ServiceAccess{
		Service:   model.ServicePlacement,
		Consumers: append(reconcile.Consumers(loopConfig(nil)), imagesDurable),
		Specs:     []string{pluralVMs},
	}
}
