package inventory

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/vapi/rest"
)

// vapiSession opens a vAPI (REST) session next to c's SOAP session. vCenter's REST endpoints do
// not accept the SOAP session, so the credentials are needed again: the SOAP client keeps none.
func vapiSession(ctx context.Context, c *govmomi.Client, login *url.Userinfo) (*rest.Client, error) {
	if login == nil {
		return nil, errors.New("vapi login: no credentials")
	}
	rc := rest.NewClient(c.Client)
	if err := rc.Login(ctx, login); err != nil {
		return nil, fmt.Errorf("vapi login to %s: %w", c.URL().Host, err)
	}
	return rc, nil
}

// closeVAPISession ends the session; a failure only leaves a session to expire on the server.
func closeVAPISession(rc *rest.Client) {
	_ = rc.Logout(context.Background())
}
