// Package crypto encrypts a VirtualMachine as its encryption class asks and reports its crypto state.
//
// In this release the service observes: once placement reports the vSphere VM created, it
// reports status.crypto (what is encrypted and with which key, whether the VM has a virtual
// TPM) and the condition VirtualMachineEncryptionSynced, which is True when nothing asks for
// encryption (no spec.crypto.encryptionClassName, no encryption storage class) or the VM
// is encrypted already, and False with reason InvalidState otherwise: vmop does not encrypt
// VMs yet. Run is the whole service; the stack binary wires it with configuration.
package crypto

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
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
	// VCenterURL is the vCenter SDK endpoint with credentials (user:password).
	VCenterURL *url.URL
	Logger     *slog.Logger // slog.Default() when nil
}

// resync re-reads every VM this often: a VM encrypted in vCenter announces nothing.
const resync = 5 * time.Minute

// Run reconciles VirtualMachines until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.VCenterURL == nil {
		return errors.New("crypto: no vCenter URL configured")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	vc, err := vcenter.Connect(ctx, cfg.VCenterURL)
	if err != nil {
		return err
	}
	defer vcenter.Logout(ctx, vc)
	h := &handler{js: cfg.JetStream, vc: vc, now: time.Now}
	return reconcile.Run(ctx, cfg.JetStream, loopConfig(cfg.Logger), h.reconcile)
}

func loopConfig(log *slog.Logger) reconcile.Config {
	return reconcile.Config{
		Service: model.ServiceCrypto, Plural: "virtualmachines", Workers: 8,
		Inputs:  []string{model.ServicePlacement},
		Related: []string{"storageclasses"},
		Resync:  resync,
		Logger:  log,
	}
}

// Access is what crypto does on NATS, which its identity is allowed: its consumers.
func Access() events.ServiceAccess {
	return events.ServiceAccess{Service: model.ServiceCrypto, Consumers: reconcile.Consumers(loopConfig(nil))}
}
