// Package storage brings a VirtualMachine's controllers, disks and volumes in line with its spec and reports them in status,
// and reports each image's status from its content library item (images.go).
//
// Once placement reports the vSphere VM created, the service adds the storage controllers
// spec.hardware names and the VM lacks, and reports status.volumes (the VM's disks),
// status.hardware.controllers, status.storage (the quota accounting of api-rules §3) and the
// condition VirtualMachineStorageReady. Run is the whole service; the stack binary wires it
// with configuration.
package storage

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// Config is what the service needs.
type Config struct {
	JetStream jetstream.JetStream
	// VCenter is the vCenter SDK endpoint (with user:password) and how to trust it.
	VCenter vcenter.Endpoint
	Logger  *slog.Logger // slog.Default() when nil
}

// resync re-reads every VM this often: disk usage grows without any event announcing it.
const resync = 5 * time.Minute

// Run reconciles VirtualMachines until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.VCenter.URL == nil {
		return errors.New("storage: no vCenter URL configured")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	vc, err := vcenter.Connect(ctx, cfg.VCenter)
	if err != nil {
		return err
	}
	defer vcenter.Logout(ctx, vc)
	rc, err := vcenter.LoginREST(ctx, vc, cfg.VCenter.URL.User)
	if err != nil {
		return err
	}
	defer vcenter.Logout(ctx, rc)
	register, err := newRegistrar(ctx, cfg.JetStream, vc)
	if err != nil {
		return err
	}
	h := &handler{js: cfg.JetStream, vc: vc, now: time.Now, register: register}
	images := &imageReconciler{rest: rc, now: time.Now}
	// The loops run until ctx ends or one fails, which stops the others.
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return reconcile.Run(ctx, cfg.JetStream, vmLoopConfig(cfg.Logger), h.reconcile)
	})
	g.Go(func() error { return images.run(ctx, cfg, pluralImages) })
	g.Go(func() error { return images.run(ctx, cfg, pluralClusterImages) })
	return g.Wait()
}

func vmLoopConfig(log *slog.Logger) reconcile.Config {
	return reconcile.Config{
		Service: model.ServiceStorage, Plural: "virtualmachines", Workers: 8,
		// crypto's slice: a disk it encrypted or rekeyed changes status.volumes[].crypto.
		Inputs:  []string{model.ServicePlacement, model.ServiceCrypto},
		Related: []string{"storageclasses"},
		Resync:  resync,
		Logger:  log,
	}
}

// Access is what storage does on NATS, which its identity is allowed: its consumers, and
// the records of the schema upgrade (the VM's back-filled volumes and annotations, the
// claims and CnsRegisterVolumes of its image disks).
func Access() events.ServiceAccess {
	return events.ServiceAccess{
		Service: model.ServiceStorage,
		Specs:   []string{"virtualmachines", pluralPVCs, pluralRegistered},
		Consumers: slices.Concat(reconcile.Consumers(vmLoopConfig(nil)),
			reconcile.Consumers(imageLoopConfig(nil, pluralImages)),
			reconcile.Consumers(imageLoopConfig(nil, pluralClusterImages))),
	}
}
