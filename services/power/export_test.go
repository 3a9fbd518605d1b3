package power

import (
	"context"
	"log/slog"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// ReconcileOnce reconciles ref once the way a delivery of its SPECS record does, with a
// reconciler of its own (as another replica, or the service after a restart, would), and
// returns once that reconcile finished. A failed reconcile is logged and retried like
// any triggered one.
func ReconcileOnce(ctx context.Context, cfg Config, ref events.Ref) error {
	vc, err := vcenter.Connect(ctx, cfg.VCenter)
	if err != nil {
		return err
	}
	defer cleanup(vc.Logout)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	r := newReconciler(cfg, vc, log)
	trigger := reconcile.NewTrigger(cfg.JetStream, reconcileConfig(log, r.whilePaused), r.reconcile)
	trigger.Request(ctx, ref)
	trigger.Wait()
	return nil
}
