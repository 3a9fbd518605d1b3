package inventory

import (
	"context"
	"errors"
	"net/url"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/vapi/rest"

	"github.com/vmop/vmop/pkg/vcenter"
)

// vapiSession opens a vAPI (REST) session next to c's SOAP session. vCenter's REST endpoints do
// not accept the SOAP session, so the credentials are needed again: the SOAP client keeps none.
func vapiSession(ctx context.Context, c *govmomi.Client, login *url.Userinfo) (*rest.Client, error) {
	if login == nil {
		return nil, errors.New("vapi login: no credentials")
	}
	return vcenter.LoginREST(ctx, c, login)
}

// closeVAPISession ends the session; a failure only leaves a session to expire on the server.
func closeVAPISession(rc *rest.Client) {
	_ = rc.Logout(context.Background())
}
