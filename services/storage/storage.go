// Package storage brings a VirtualMachine's controllers, disks and volumes in line with its spec and reports them in status.
//
// Run is the whole service; the stack binary wires it with configuration.
package storage

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// Config is what the service needs.
type Config struct {
	JetStream jetstream.JetStream
}

// Run reconciles VirtualMachines until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	return reconcile.Run(ctx, cfg.JetStream, reconcile.Config{
		Service: model.ServiceStorage, Plural: "virtualmachines", Workers: 8,
	}, reconcileVM)
}

// reconcileVM reports that the service has seen the VM's generation and, when the VM is
// being deleted, that it holds nothing back. The vCenter work arrives with the pipeline.
func reconcileVM(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
	return reconcile.Result{Released: o.Deleting()}, nil
}
