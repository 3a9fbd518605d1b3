package vcenter

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/session/keepalive"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
)

// Endpoint is a vCenter and how its certificate is trusted. Verification is the default:
// against CAFile when set, else the system's CAs; a certificate they do not vouch for is
// still accepted when its thumbprint is Thumbprint. Insecure skips verification, which
// leaves the password to whoever sits between vmop and vCenter.
type Endpoint struct {
	URL        *url.URL // the SDK endpoint, with user:password
	CAFile     string   // PEM file(s) of the CAs to trust, or vCenter's own certificate
	Thumbprint string   // SHA-256 (or SHA-1) of vCenter's certificate, hex with or without colons
	Insecure   bool
	// Client names who connects (a service, e.g. "placement"): vCenter sees it in the
	// session's User-Agent, and its calls are counted under it.
	Client string
}

// maxIdleConns bounds the idle connections a service keeps to vCenter: above its worker
// count, so the connections its workers use stay open between calls.
const maxIdleConns = 32

// keepaliveIdle is how long a session may stay unused before a keepalive call is sent.
const keepaliveIdle = time.Minute

// Connect logs in to e over TLS verified as e says, keeps the session from idling out and
// logs in again when vCenter forgets it (a restart, an expiry): see relogin.
func Connect(ctx context.Context, e Endpoint) (*govmomi.Client, error) {
	return connect(ctx, e, time.Now)
}

// connect is Connect with the clock its re-login backoff reads.
func connect(ctx context.Context, e Endpoint, now func() time.Time) (*govmomi.Client, error) {
	sc, err := e.soapClient()
	if err != nil {
		return nil, err
	}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, connectError(e.URL.Host, err)
	}
	rl := &relogin{soap: sc, user: e.URL.User, manager: *vc.ServiceContent.SessionManager, gate: loginGate{now: now}}
	vc.RoundTripper = keepalive.NewHandlerSOAP(measureCalls{client: e.Client, next: rl}, keepaliveIdle, nil)
	c := &govmomi.Client{Client: vc, SessionManager: session.NewManager(vc)}
	if err := c.Login(ctx, e.URL.User); err != nil {
		return nil, fmt.Errorf("log in to vCenter %s: %w", e.URL.Host, err)
	}
	return c, nil
}

// soapClient is the HTTP side of a connection to e: its TLS trust and connection pool.
func (e Endpoint) soapClient() (*soap.Client, error) {
	switch {
	case e.URL == nil:
		return nil, errors.New("no vCenter URL")
	case e.URL.User == nil:
		return nil, fmt.Errorf("vCenter %s: no credentials", e.URL.Host)
	case e.URL.Scheme != "https" && !e.Insecure:
		return nil, fmt.Errorf("vCenter %s: scheme %q would send the password in the clear; use https", e.URL.Host, e.URL.Scheme)
	case e.Insecure && (e.CAFile != "" || e.Thumbprint != ""):
		return nil, fmt.Errorf("vCenter %s: a CA file or thumbprint contradicts insecure", e.URL.Host)
	}
	sc := soap.NewClient(e.URL, e.Insecure)
	if e.CAFile != "" {
		if err := sc.SetRootCAs(e.CAFile); err != nil {
			return nil, fmt.Errorf("vCenter CA file: %w", err)
		}
	}
	if e.Thumbprint != "" {
		sc.SetThumbprint(e.URL.Host, normalThumbprint(e.Thumbprint))
	}
	// net/http keeps 2 idle connections per host by default: a service with more calls in
	// flight would close the rest after each call and pay a TLS handshake on the next one.
	sc.DefaultTransport().MaxIdleConnsPerHost = maxIdleConns
	sc.Client.Transport = drainBodies{sc.Client.Transport}
	if e.Client != "" {
		sc.UserAgent = "vmop-" + e.Client
	}
	return sc, nil
}

// normalThumbprint is t as govmomi compares thumbprints: upper-case hex pairs joined by colons.
func normalThumbprint(t string) string {
	t = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(t), ":", ""))
	pairs := make([]string, 0, len(t)/2+1)
	for len(t) > 2 {
		pairs, t = append(pairs, t[:2]), t[2:]
	}
	return strings.Join(append(pairs, t), ":")
}

// CertificateError is a vCenter whose certificate the connection's settings do not trust.
type CertificateError struct {
	Host string
	// Thumbprint is the SHA-256 thumbprint of the certificate it presented, to be compared
	// with vCenter's own before trusting it.
	Thumbprint string
	Err        error
}

func (e *CertificateError) Error() string {
	return fmt.Sprintf("vCenter %s presented a certificate that is not trusted (%v); its SHA-256 thumbprint is %s",
		e.Host, e.Err, e.Thumbprint)
}

func (e *CertificateError) Unwrap() error { return e.Err }

// connectError tells an untrusted certificate apart from other failures to reach vCenter.
func connectError(host string, err error) error {
	var verify *tls.CertificateVerificationError
	if errors.As(err, &verify) && len(verify.UnverifiedCertificates) > 0 {
		return &CertificateError{Host: host, Thumbprint: soap.ThumbprintSHA256(verify.UnverifiedCertificates[0]), Err: verify.Err}
	}
	return fmt.Errorf("connect to vCenter %s: %w", host, err)
}
