// Package power drives a VirtualMachine's power state (Hard, Soft and TrySoft modes, restarts, power-on checks) and resizes it by class.
//
// The VM is powered on once placement created it, storage, network and (for a VM that
// asks for encryption) crypto report their parts ready and no poweron.check.vmoperator.vmware.com/* annotation remains;
// powered off or suspended when the spec says so. A watch on vCenter's events brings
// out-of-band changes (someone powering the VM off in vCenter) back to the spec.
//
// Run is the whole service; the stack binary wires it with configuration.
package power

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

const (
	plural = "virtualmachines"
	// resyncEvery catches what the vCenter watch may have missed (while it restarted, or
	// where vCenter posts no event).
	resyncEvery = 30 * time.Second
	workers     = 8
)

// Config is what the service needs.
type Config struct {
	JetStream jetstream.JetStream
	VCenter   vcenter.Endpoint // with user:password, and how to trust it
	Logger    *slog.Logger
	// TrySoftTimeout is how long a TrySoft power-off, suspend or restart gives the guest
	// before acting hard, unless the VM's power.vmop.dev/trysoft-timeout annotation says
	// otherwise; also how long a Soft one waits before asking again. Zero means
	// DefaultTrySoftTimeout.
	TrySoftTimeout time.Duration
	// SoftRetry is how soon a Soft operation waiting for VMware Tools is tried again;
	// zero means DefaultSoftRetry.
	SoftRetry time.Duration
}

// DefaultTrySoftTimeout is the seed's five minutes; DefaultSoftRetry matches the resync.
const (
	DefaultTrySoftTimeout = 5 * time.Minute
	DefaultSoftRetry      = resyncEvery
)

// Run reconciles VirtualMachines until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.VCenter.URL == nil {
		return errors.New("power: no vCenter URL")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	vc, err := vcenter.Connect(ctx, cfg.VCenter)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return err
	}
	defer vcenter.Logout(ctx, vc)

	stop := ctx
	r := newReconciler(cfg, vc, log)
	rcfg := reconcileConfig(log, r.whilePaused)
	trigger := reconcile.NewTrigger(cfg.JetStream, rcfg, r.reconcile)
	w := &watcher{vc: vc, index: r.index, req: trigger, log: log.With("service", model.ServicePower)}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.wake = func(ref events.Ref, at time.Time) { trigger.RequestAt(ctx, ref, at) }
	var watching sync.WaitGroup
	watching.Go(func() { w.run(ctx) })
	groups := make(chan error, 1)
	go func() { groups <- runGroups(ctx, cfg.JetStream, log); cancel() }()
	err = trigger.Run(ctx)
	cancel()
	watching.Wait() // the watch has cancelled its long poll: nothing requests reconciles any more
	trigger.Wait()
	return withoutStop(stop, errors.Join(err, <-groups))
}

// withoutStop is err without the cancellations that are the stop the caller asked for
// (ctx ended), e.g. of a stream setup still under way when the service is stopped.
func withoutStop(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	var kept []error
	var walk func(error)
	walk = func(err error) {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				walk(e)
			}
		} else if err != nil && !errors.Is(err, context.Canceled) {
			kept = append(kept, err)
		}
	}
	walk(err)
	return errors.Join(kept...)
}

// newReconciler is the service's reconciler for cfg; its wake is set by whoever runs it.
func newReconciler(cfg Config, vc *govmomi.Client, log *slog.Logger) *reconciler {
	return &reconciler{js: cfg.JetStream, vc: vc, index: newVMIndex(), log: log, modes: modeConfig{
		trySoftTimeout: cmp.Or(cfg.TrySoftTimeout, DefaultTrySoftTimeout),
		softRetry:      cmp.Or(cfg.SoftRetry, DefaultSoftRetry),
	}}
}

func reconcileConfig(log *slog.Logger, whilePaused func(context.Context, reconcile.Object) error) reconcile.Config {
	return reconcile.Config{
		Service: model.ServicePower, Plural: plural, Workers: workers,
		Inputs: inputs, Resync: resyncEvery, Concern: concern, Logger: log,
		WhilePaused: whilePaused,             // admin_pause.go
		Related:     []string{pluralClasses}, // resize.go: a changed class may resize its VMs
	}
}

// Access is what power does on NATS, which its identity is allowed: its consumers, the
// power CloudEvents, and appending to the SPECS of VirtualMachines (a resize's class, a
// group's members' labels) and VirtualMachineGroups (nested members).
func Access() events.ServiceAccess {
	a := events.ServiceAccess{
		Service:   model.ServicePower,
		Consumers: slices.Concat(reconcile.Consumers(reconcileConfig(nil, nil)), reconcile.Consumers(groupsConfig(nil)), []string{membersDurable}),
		Specs:     []string{plural, groupPlural},
	}
	for _, typ := range slices.Sorted(maps.Values(powerEventTypes)) {
		a.Events = append(a.Events, events.EventKind{Plural: plural, Type: typ})
	}
	for _, typ := range []string{events.TypeVirtualMachinePowerOnBlocked, events.TypeVirtualMachinePowerOnUnblocked} {
		a.Events = append(a.Events, events.EventKind{Plural: plural, Type: typ})
	}
	return a
}
