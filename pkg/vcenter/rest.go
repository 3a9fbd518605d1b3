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

// LoginREST opens the vAPI (REST) session beside c's SOAP one, kept from idling out: the
// content library and tags are only there, and their endpoints do not accept the SOAP
// session, so they need a login of their own.
func LoginREST(ctx context.Context, c *govmomi.Client, login *url.Userinfo) (*rest.Client, error) {
	rc := rest.NewClient(c.Client)
	rc.Transport = keepalive.NewHandlerREST(rc, time.Minute, nil)
	if err := rc.Login(ctx, login); err != nil {
		return nil, fmt.Errorf("vapi login to %s: %w", c.URL().Host, err)
	}
	return rc, nil
}
