package vcenter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// relogin sends SOAP calls and, when vCenter answers one with NotAuthenticated (it
// restarted, or expired or terminated the session), logs in again and sends the call
// once more: vCenter refused it before doing anything, so the repeat cannot do it twice.
// Calls failing together log in once: only a call that went out with the current session
// cookie logs in, the others retry with the cookie it got. A failed login is not repeated
// for a while (see loginGate): calls meanwhile fail with its error.
type relogin struct {
	soap    *soap.Client
	user    *url.Userinfo
	manager types.ManagedObjectReference // the SessionManager
	gate    loginGate
}

func (r *relogin) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	switch req.(type) {
	case *methods.LoginBody, *methods.LogoutBody:
		return r.soap.RoundTrip(ctx, req, res)
	}
	sent := r.cookie()
	err := r.soap.RoundTrip(ctx, req, res)
	if !unauthenticated(err, res) {
		return err
	}
	if err := r.login(ctx, sent); err != nil {
		return err
	}
	// The failed answer's fault stays in res unless cleared: the repeat decodes into it.
	body := reflect.ValueOf(res).Elem()
	body.Set(reflect.Zero(body.Type()))
	return r.soap.RoundTrip(ctx, req, res)
}

// unauthenticated: vCenter refused the call for want of a session. vcsim answers a
// property read without one by reporting every property missing for NotAuthenticated.
func unauthenticated(err error, res soap.HasFault) bool {
	if err != nil {
		return fault.Is(err, &types.NotAuthenticated{})
	}
	var objects []types.ObjectContent
	switch r := res.(type) {
	case *methods.RetrievePropertiesBody:
		if r.Res != nil {
			objects = r.Res.Returnval
		}
	case *methods.RetrievePropertiesExBody:
		if r.Res != nil && r.Res.Returnval != nil {
			objects = r.Res.Returnval.Objects
		}
	}
	for _, o := range objects {
		for _, m := range o.MissingSet {
			if _, ok := m.Fault.Fault.(*types.NotAuthenticated); ok {
				return true
			}
		}
	}
	return false
}

func (r *relogin) cookie() string {
	if c := r.soap.SessionCookie(); c != nil {
		return c.Value
	}
	return ""
}

// login opens a new session unless another call already replaced the one sent.
func (r *relogin) login(ctx context.Context, sent string) error {
	return r.gate.login(ctx, func() bool { return r.cookie() == sent }, func(ctx context.Context) error {
		password, _ := r.user.Password()
		req := types.Login{This: r.manager, UserName: r.user.Username(), Password: password}
		if _, err := methods.Login(ctx, r.soap, &req); err != nil {
			return fmt.Errorf("log in again to vCenter %s: %w", r.soap.URL().Host, err)
		}
		return nil
	})
}

// reloginREST is relogin for the vAPI (REST) session: a 401 answer logs in again and the
// request is sent once more with the new session, when its body can be sent again. Logins
// go through a loginGate as relogin's do; while one holds them back, calls get the 401.
type reloginREST struct {
	next http.RoundTripper
	rc   *rest.Client
	user *url.Userinfo
	gate loginGate
}

// sessionHeader carries the vAPI session (govmomi's vapi/internal.SessionCookieName).
const sessionHeader = "vmware-api-session-id"

func (r *reloginREST) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := req.Header.Get(sessionHeader)
	req, again := resendable(req)
	res, err := r.next.RoundTrip(req)
	if err != nil || res.StatusCode != http.StatusUnauthorized || sent == "" ||
		req.Header.Get("Authorization") != "" || !again {
		return res, err // no session yet, a login, or a body that cannot be sent again
	}
	if err := r.login(req.Context(), sent); err != nil {
		return res, nil // the 401, for the caller to report
	}
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return res, nil
		}
	}
	_ = res.Body.Close()
	retry.Header.Set(sessionHeader, r.rc.SessionID())
	return r.next.RoundTrip(retry)
}

// resendable is req with a body that can be sent again, if it can have one. govmomi gives
// a call without a body (a GET, a POST ~action) an empty reader net/http cannot rewind: it
// is probed, as net/http's transport does, and an empty one replaced with http.NoBody.
func resendable(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return req, true
	}
	if req.ContentLength != 0 {
		return req, false // a body of known length: not read here, nor sent twice
	}
	body := req.Body
	var first [1]byte
	n, err := io.ReadFull(body, first[:])
	req = req.Clone(req.Context())
	if err == io.EOF {
		_ = body.Close()
		req.Body, req.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
		return req, true
	}
	req.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(first[:n]), body), body}
	return req, false
}

func (r *reloginREST) login(ctx context.Context, sent string) error {
	return r.gate.login(ctx, func() bool { return r.rc.SessionID() == sent }, func(ctx context.Context) error {
		return r.rc.Login(ctx, r.user)
	})
}
