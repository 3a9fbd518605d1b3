// Package crypto encrypts a VirtualMachine as its storage class, class and encryption class
// ask, and reports its crypto state and whether EncryptionClasses name keys that exist.
//
// Once placement reports the vSphere VM created, a VM whose storage class is an encryption
// class, or whose class gives it a vTPM, is encrypted with the key of
// spec.crypto.encryptionClassName, else of vCenter's default key provider (seed,
// Encryption); a changed key rekeys it, a vTPM is added or removed while it is off. It
// reports status.crypto and VirtualMachineEncryptionSynced, on which power waits before a
// power-on. Each EncryptionClass gets a Ready condition. Run is the whole service; the
// stack binary wires it with configuration.
package crypto

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/crypto"

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

// resync re-reads every VM and class this often: a key removed or a VM encrypted in vCenter
// announces nothing.
const resync = 5 * time.Minute

const pluralClasses = "encryptionclasses"

// Run reconciles VirtualMachines and EncryptionClasses until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.VCenter.URL == nil {
		return errors.New("crypto: no vCenter URL configured")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	vc, err := vcenter.Connect(ctx, cfg.VCenter)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return err
	}
	defer vcenter.Logout(ctx, vc)
	kmip := crypto.NewManagerKmip(vc.Client)
	h := &handler{js: cfg.JetStream, vc: vc, kmip: kmip, now: time.Now}
	c := &classReconciler{kmip: kmip, now: time.Now}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() {
		errc <- reconcile.Run(ctx, cfg.JetStream, vmLoopConfig(cfg.Logger), h.reconcile)
	}()
	go func() { errc <- reconcile.Run(ctx, cfg.JetStream, classLoopConfig(cfg.Logger), c.reconcile) }()
	first := <-errc
	cancel()
	if second := <-errc; first == nil {
		first = second
	}
	return first
}

func vmLoopConfig(log *slog.Logger) reconcile.Config {
	return reconcile.Config{
		Service: model.ServiceCrypto, Plural: "virtualmachines", Workers: 8,
		// power's slice tells when a VM waiting to be off to be encrypted is off.
		Inputs:  []string{model.ServicePlacement, model.ServicePower},
		Related: []string{"storageclasses", "virtualmachineclasses", pluralClasses},
		Resync:  resync,
		Concern: concern,
		Logger:  log,
	}
}

func classLoopConfig(log *slog.Logger) reconcile.Config {
	return reconcile.Config{
		Service: model.ServiceCrypto, Durable: model.ServiceCrypto + "-" + pluralClasses, Plural: pluralClasses,
		Workers: 2, Resync: resync, Logger: log,
	}
}

// Access is what crypto does on NATS, which its identity is allowed: its consumers.
func Access() events.ServiceAccess {
	consumers := append(reconcile.Consumers(vmLoopConfig(nil)), reconcile.Consumers(classLoopConfig(nil))...)
	return events.ServiceAccess{Service: model.ServiceCrypto, Consumers: consumers}
}
