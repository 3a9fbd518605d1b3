package placement

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/session/keepalive"
	"github.com/vmware/govmomi/vapi/rest"

	"github.com/vmop/vmop/pkg/vcenter"
)

// session is the service's one vCenter login: SOAP for the inventory and tasks, and the
// vAPI (REST) side the content library deploy and the zone tags need. The REST endpoints
// do not accept the SOAP session, so the login is kept for them.
type session struct {
	c     *govmomi.Client
	rest  *rest.Client
	login *url.Userinfo
}

func openSession(ctx context.Context, u *url.URL) (*session, error) {
	c, err := vcenter.Connect(ctx, u)
	if err != nil {
		return nil, err
	}
	rc := rest.NewClient(c.Client)
	rc.Transport = keepalive.NewHandlerREST(rc, time.Minute, nil)
	if err := rc.Login(ctx, u.User); err != nil {
		_ = c.Logout(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("vapi login to %s: %w", u.Host, err)
	}
	return &session{c: c, rest: rc, login: u.User}, nil
}

// close logs out, which also stops the keep-alive loops; a failure only leaves sessions
// for vCenter to expire.
func (s *session) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.rest.Logout(ctx)
	_ = s.c.Logout(ctx)
}
