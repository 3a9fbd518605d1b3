// Package storage brings a VirtualMachine's controllers, disks and volumes in line with its spec and reports them in status,
// reports each image's status from its content library item (images.go), and provisions each
// PersistentVolumeClaim as a CNS volume (claim.go).
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
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/cns"
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

// Run reconciles VirtualMachines, images and PersistentVolumeClaims until ctx ends. An
// end asked for is no failure, also when it comes while the loops still start (their
// setup then fails with the context's error).
func Run(ctx context.Context, cfg Config) error {
	err := run(ctx, cfg)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func run(ctx context.Context, cfg Config) error {
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
	cnsClient, err := cns.NewClient(ctx, vc.Client)
	if err != nil {
		return fmt.Errorf("storage: CNS client: %w", err)
	}
	claimVolumes := &volumes{vc: vc, cns: cnsClient, user: cfg.VCenter.URL.User.Username()}
	uses := newVMClaims(cfg.JetStream)
	register := &registrar{js: cfg.JetStream, uses: uses, vc: vc, cns: cnsClient, creates: claimVolumes, now: time.Now}
	h := &handler{js: cfg.JetStream, vc: vc, volumes: &attacher{vc: vc, cns: &cnsRegistry{c: cnsClient, vc: vc.Client}, js: cfg.JetStream}, register: register,
		isos: &isoFinder{js: cfg.JetStream, rest: rc, vim: vc.Client}, now: time.Now}
	vmLoop := vmLoopConfig(cfg.Logger)
	vmLoop.Relate = vmsOfClaim(uses)
	// A VM is looked at again, outside the streams, while a claim's expansion is pending.
	trigger := reconcile.NewTrigger(cfg.JetStream, vmLoop, h.reconcile)
	claimCfg := claimLoopConfig(cfg.Logger)
	pvcs := &claims{js: cfg.JetStream, uses: uses, volumes: claimVolumes, now: time.Now}
	pvcs.trigger = reconcile.NewTrigger(cfg.JetStream, claimCfg, pvcs.reconcile)
	images := &imageReconciler{rest: rc, vc: vc.Client, now: time.Now}
	// The loops run until ctx ends or one fails, which stops the others.
	g, ctx := errgroup.WithContext(ctx)
	h.volumes.later = func(ref events.Ref, at time.Time) { trigger.RequestAt(ctx, ref, at) }
	g.Go(func() error {
		defer trigger.Wait()
		return trigger.Run(ctx)
	})
	g.Go(func() error { return pvcs.trigger.Run(ctx) })
	g.Go(func() error { return images.run(ctx, cfg, pluralImages) })
	g.Go(func() error { return images.run(ctx, cfg, pluralClusterImages) })
	return g.Wait()
}

func vmLoopConfig(log *slog.Logger) reconcile.Config {
	return reconcile.Config{
		Service: model.ServiceStorage, Plural: "virtualmachines", Workers: 8,
		// crypto's slice: a disk it encrypted or rekeyed changes status.volumes[].crypto;
		// power's: a VM powered off takes the changed block tracking and the controller
		// changes that waited for it.
		Inputs: []string{model.ServicePlacement, model.ServiceCrypto, model.ServicePower},
		// a claim bound, grown or deleted changes the volumes of the VMs that name or own
		// it (Relate: vmsOfClaim);
		// an image a CD-ROM names may come later, and the class sizes an ISO VM's boot disk
		Related: []string{"storageclasses", pluralClaims, pluralImages, pluralClusterImages, "virtualmachineclasses"},
		Resync:  resync,
		Concern: concern,
		Logger:  log,
	}
}

// Access is what storage does on NATS, which its identity is allowed: its consumers; the
// records of the schema upgrade (the VM's back-filled volumes and annotations, the claims and
// CnsRegisterVolumes of its image disks); a claim's volume ID, its pvc-protection finalizer's
// removal and the deletion of a claim whose owners are gone; and the claims' events.
func Access() events.ServiceAccess {
	return events.ServiceAccess{
		Service: model.ServiceStorage,
		Specs:   []string{"virtualmachines", pluralClaims, pluralRegistered},
		Consumers: slices.Concat(reconcile.Consumers(vmLoopConfig(nil)),
			reconcile.Consumers(imageLoopConfig(nil, pluralImages)),
			reconcile.Consumers(imageLoopConfig(nil, pluralClusterImages)),
			reconcile.Consumers(claimLoopConfig(nil))),
		Events: claimEventKinds(),
	}
}
