package vcenter

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/session/keepalive"
	"github.com/vmware/govmomi/vapi/rest"
)

// LoginREST opens the vAPI (REST) session beside c's SOAP one (over the same verified
// TLS), kept from idling out and logged in again when vCenter forgets it: the content
// library and tags are only there, and their endpoints do not accept the SOAP session, so
// they need a login of their own.
func LoginREST(ctx context.Context, c *govmomi.Client, login *url.Userinfo) (*rest.Client, error) {
	return loginREST(ctx, c, login, time.Now)
}

// loginREST is LoginREST with the clock its re-login backoff reads.
func loginREST(ctx context.Context, c *govmomi.Client, login *url.Userinfo, now func() time.Time) (*rest.Client, error) {
	rc := rest.NewClient(c.Client)
	rc.Transport = &reloginREST{next: rc.Transport, rc: rc, user: login, gate: loginGate{now: now}}
	rc.Transport = keepalive.NewHandlerREST(rc, keepaliveIdle, nil)
	if err := rc.Login(ctx, login); err != nil {
		return nil, fmt.Errorf("vapi login to %s: %w", c.URL().Host, err)
	}
	return rc, nil
}

// logoutTimeout is what a stopping service gives vCenter to end its sessions.
const logoutTimeout = 5 * time.Second

// Logout ends the sessions (SOAP or vAPI), within a few seconds even when ctx is done, as
// it is when a service stops; a failure only leaves a session for vCenter to expire.
func Logout(ctx context.Context, sessions ...interface{ Logout(context.Context) error }) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), logoutTimeout)
	defer cancel()
	for _, s := range sessions {
		_ = s.Logout(ctx)
	}
}
