package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Role vcsim's export holds its certificate and nothing else of its directory (the key
// stays behind).
func TestVCSimCertExportLeavesTheKey(t *testing.T) {
	data, export := t.TempDir(), t.TempDir()
	c := config{Data: data, VCSimExport: export}
	if err := os.MkdirAll(filepath.Dir(vcsimCertFile(c)), 0o700); err != nil {
		t.Fatal(err)
	}
	cert := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	if err := os.WriteFile(vcsimCertFile(c), cert, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(vcsimCertFile(c)), "tls.key"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exportVCSimCert(c); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(export)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "tls.crt" {
		t.Fatalf("export holds %v; want tls.crt alone", entries)
	}
	if got, _ := os.ReadFile(filepath.Join(export, "tls.crt")); string(got) != string(cert) {
		t.Errorf("exported %q; want the certificate", got)
	}

}
