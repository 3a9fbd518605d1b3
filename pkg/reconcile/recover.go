package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
)

// call runs f, turning its panic into an error: the message is then retried with
// backoff, like any failed reconcile, and one bad object never takes the process (in
// `make run`, the whole stack) down. The panic is logged once, with its stack.
func call(ctx context.Context, log *slog.Logger, service string, f Func, o Object) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("reconcile panicked", "service", service, "object", o.Ref.String(), "panic", fmt.Sprint(r),
				"stack", string(debug.Stack()))
			err = fmt.Errorf("reconcile %s panicked: %v", o.Ref, r)
		}
	}()
	return f(ctx, o)
}
