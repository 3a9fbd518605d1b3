package placement

import (
	"context"
	"net/url"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/vapi/rest"

	"github.com/vmop/vmop/pkg/vcenter"
)

// session is the service's one vCenter login: SOAP for the inventory and tasks, and the
// vAPI (REST) side the content library deploy and the zone tags need.
type session struct {
	c     *govmomi.Client
	rest  *rest.Client
	login *url.Userinfo
}

func openSession(ctx context.Context, e vcenter.Endpoint) (*session, error) {
	c, err := vcenter.Connect(ctx, e)
	if err != nil {
		return nil, err
	}
	rc, err := vcenter.LoginREST(ctx, c, e.URL.User)
	if err != nil {
		_ = c.Logout(context.WithoutCancel(ctx))
		return nil, err
	}
	return &session{c: c, rest: rc, login: e.URL.User}, nil
}

// close logs out, which also stops the keep-alive loops; a failure only leaves sessions
// for vCenter to expire.
func (s *session) close() {
	vcenter.Logout(context.Background(), s.rest, s.c)
}
