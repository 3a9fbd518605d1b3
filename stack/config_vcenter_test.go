package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The vCenter settings: a password is required for an outside vCenter, never defaulted;
// contradictory or ignored settings are refused; an error never shows a password.
func TestVCenterConfig(t *testing.T) {
	passwordFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(passwordFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const url = "https://vc.example.com/sdk"
	tests := []struct {
		name         string
		env          map[string]string
		wantPassword string // of the endpoint
		wantTLS      vcenterTLS
		wantErr      string
	}{
		{name: "embedded vcsim", env: map[string]string{}},
		{name: "outside vCenter without a password", env: map[string]string{"VMOP_VCENTER_URL": url},
			wantErr: "no password"},
		{name: "password", env: map[string]string{"VMOP_VCENTER_URL": url, "VMOP_VCENTER_PASSWORD": "p1"}, wantPassword: "p1"},
		{name: "password file", env: map[string]string{"VMOP_VCENTER_URL": url, "VMOP_VCENTER_PASSWORD_FILE": passwordFile},
			wantPassword: "from-file"},
		{name: "password in the URL", env: map[string]string{"VMOP_VCENTER_URL": "https://u:in-url@vc.example.com/sdk"},
			wantPassword: "in-url"},
		{name: "password and password file", env: map[string]string{"VMOP_VCENTER_URL": url, "VMOP_VCENTER_PASSWORD": "p1", "VMOP_VCENTER_PASSWORD_FILE": passwordFile},
			wantErr: "both set"},
		{name: "missing password file", env: map[string]string{"VMOP_VCENTER_URL": url, "VMOP_VCENTER_PASSWORD_FILE": passwordFile + ".missing"},
			wantErr: "VMOP_VCENTER_PASSWORD_FILE"},
		{name: "CA file", env: map[string]string{"VMOP_VCENTER_URL": url, "VMOP_VCENTER_PASSWORD": "p1", "VMOP_VCENTER_CA_FILE": "/ca.pem"},
			wantPassword: "p1", wantTLS: vcenterTLS{CAFile: "/ca.pem"}},
		{name: "insecure", env: map[string]string{"VMOP_VCENTER_URL": url, "VMOP_VCENTER_PASSWORD": "p1", "VMOP_VCENTER_INSECURE": "true"},
			wantPassword: "p1", wantTLS: vcenterTLS{Insecure: true}},
		{name: "insecure and a thumbprint", env: map[string]string{"VMOP_VCENTER_URL": url, "VMOP_VCENTER_PASSWORD": "p1", "VMOP_VCENTER_INSECURE": "true", "VMOP_VCENTER_THUMBPRINT": "AB"},
			wantErr: "contradicts"},
		{name: "insecure misspelt", env: map[string]string{"VMOP_VCENTER_URL": url, "VMOP_VCENTER_PASSWORD": "p1", "VMOP_VCENTER_INSECURE": "yes please"},
			wantErr: "want true or false"},
		{name: "TLS settings for the embedded vcsim", env: map[string]string{"VMOP_VCENTER_CA_FILE": "/ca.pem"},
			wantErr: "embedded vcsim"},
		{name: "unparsable URL", env: map[string]string{"VMOP_VCENTER_URL": "https://u:secret-in-url@vc.example.com:port/sdk"},
			wantErr: "VMOP_VCENTER_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("loadConfig: %v, want an error about %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("error %q shows the password", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.VCenterURL == "" {
				if c.VCenterPassword != defaultVCSimPassword || c.VCenterTLS != (vcenterTLS{}) {
					t.Errorf("embedded vcsim: password %q, TLS %+v", c.VCenterPassword, c.VCenterTLS)
				}
				return
			}
			e, err := vcenterEndpoint(c)
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := e.URL.User.Password(); p != tt.wantPassword || c.VCenterTLS != tt.wantTLS {
				t.Errorf("password %q, TLS %+v; want %q, %+v", p, c.VCenterTLS, tt.wantPassword, tt.wantTLS)
			}
		})
	}
}
