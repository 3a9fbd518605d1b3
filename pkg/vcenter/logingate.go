package vcenter

import (
	"context"
	"sync"
	"time"
)

// After a failed re-login no other is tried for loginBackoffMin; each further failure
// doubles the wait, up to loginBackoffMax. A success starts over.
const (
	loginBackoffMin = time.Second
	loginBackoffMax = time.Minute
)

// loginGate lets one call at a time log in again, and none for a while after a login
// failed: when the password was rotated, every worker's every call would otherwise send
// vCenter a login bound to fail, and a run of failed logins locks the account.
type loginGate struct {
	now   func() time.Time
	mu    sync.Mutex
	err   error         // the last login's failure; nil once one succeeded
	until time.Time     // while err is set, no login is tried before then
	wait  time.Duration // how long err holds logins back
}

// login calls login when needed (the session the caller was refused with is still the
// one held: no other call replaced it meanwhile), unless a failed login is still being
// waited out: then it returns that failure without asking vCenter.
func (g *loginGate) login(ctx context.Context, needed func() bool, login func(context.Context) error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !needed() {
		return nil
	}
	if g.err != nil && g.now().Before(g.until) {
		return g.err
	}
	err := login(ctx)
	switch {
	case err == nil:
		g.err, g.wait = nil, 0
	case ctx.Err() == nil: // vCenter or the network failed, not the caller giving up
		g.wait = min(max(2*g.wait, loginBackoffMin), loginBackoffMax)
		g.err, g.until = err, g.now().Add(g.wait)
	}
	return err
}
