package vcenter_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/soap"

	"github.com/vmop/vmop/pkg/vcenter"
)

// vcsim serves a certificate no system CA signed: Connect refuses it unless trusted by CA
// file, by thumbprint or explicitly insecure, and says what was presented.
func TestConnectVerifiesTLS(t *testing.T) {
	sim := simulate(t)
	ctx := t.Context()
	caFile, err := sim.server.CertificateFile()
	if err != nil {
		t.Fatal(err)
	}
	thumbprint := soap.ThumbprintSHA256(sim.server.Certificate())
	password, _ := sim.endpoint.URL.User.Password()
	bare := vcenter.Endpoint{URL: sim.endpoint.URL}

	_, err = vcenter.Connect(ctx, bare)
	var untrusted *vcenter.CertificateError
	if !errors.As(err, &untrusted) {
		t.Fatalf("Connect without trust settings: %v, want a CertificateError", err)
	}
	if untrusted.Host != bare.URL.Host || untrusted.Thumbprint != thumbprint {
		t.Errorf("CertificateError names %s %s, want %s %s", untrusted.Host, untrusted.Thumbprint, bare.URL.Host, thumbprint)
	}
	for _, want := range []string{bare.URL.Host, "not trusted", "x509", thumbprint} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("error %q shows the password", err)
	}

	wrong := bare
	wrong.Thumbprint = strings.Repeat("AB:", 31) + "AB"
	if _, err := vcenter.Connect(ctx, wrong); err == nil || !strings.Contains(err.Error(), "thumbprint does not match") {
		t.Errorf("Connect with another certificate's thumbprint: %v", err)
	}
	plain := bare
	plain.URL = &url.URL{Scheme: "http", Host: bare.URL.Host, Path: bare.URL.Path, User: bare.URL.User}
	if _, err := vcenter.Connect(ctx, plain); err == nil || !strings.Contains(err.Error(), "in the clear") {
		t.Errorf("Connect over http: %v", err)
	}

	trusted := map[string]vcenter.Endpoint{
		"CA file":             {URL: bare.URL, CAFile: caFile},
		"thumbprint":          {URL: bare.URL, Thumbprint: thumbprint},
		"bare hex thumbprint": {URL: bare.URL, Thumbprint: strings.ToLower(strings.ReplaceAll(thumbprint, ":", ""))},
		"explicitly insecure": {URL: bare.URL, Insecure: true},
		"SHA-1 thumbprint":    {URL: bare.URL, Thumbprint: soap.ThumbprintSHA1(sim.server.Certificate())},
	}
	for name, e := range trusted {
		t.Run(name, func(t *testing.T) {
			c, err := vcenter.Connect(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			vcenter.Logout(ctx, c)
		})
	}
}
