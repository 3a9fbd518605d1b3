package reconcile

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"
)

// call runs f on o unless the object's lease was lost (another replica may act on it now)
// or o is paused (then f must not act: see paused), turning a panic of f (or of the
// service's Config.WhilePaused) into an error: the message is then retried with backoff,
// like any failed reconcile, and one bad object never takes the process (in `make run`,
// the whole stack) down. The panic is logged once, with its stack.
func call(ctx context.Context, cfg Config, f Func, o Object) (res Result, err error) {
	if err := leaseHeld(ctx); err != nil {
		return Result{}, err // joined a lease lost meanwhile: another replica may act on the object
	}
	if by := pausedBy(o.Meta); by != "" {
		defer recoverPanic(cfg, o, &err)
		return paused(ctx, cfg, o, by)
	}
	defer observeReconcile(cfg.Service, o.Ref.Plural, time.Now(), &err)
	defer recoverPanic(cfg, o, &err)
	return f(ctx, o)
}

// recoverPanic, deferred, turns a panic of the reconcile of o into *err.
func recoverPanic(cfg Config, o Object, err *error) {
	if r := recover(); r != nil {
		cfg.Logger.Error("reconcile panicked", "service", cfg.Service, "object", o.Ref.String(), "panic", fmt.Sprint(r),
			"stack", string(debug.Stack()))
		*err = fmt.Errorf("reconcile %s panicked: %v", o.Ref, r)
	}
}
