package api_test

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/vmop/vmop/services/api"
)

// TestCA checks that the stack's CA is kept with its key and signs serving certificates
// for the names asked, re-issuing one only when it no longer fits.
func TestCA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certs, err := api.EnsureCertificates(dir, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "ca.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("CA key: %v, %v; want a file of mode 0600", st, err)
	}
	ca, err := api.EnsureCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	certFile, _, err := ca.EnsureServing("nats", "vmop-nats", []string{"localhost", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	verify(t, certs.CAFile, certFile, "localhost")
	verify(t, certs.CAFile, certs.CertFile, "127.0.0.1")

	before, _ := os.ReadFile(certFile)
	if _, _, err := ca.EnsureServing("nats", "vmop-nats", []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(certFile); string(after) != string(before) {
		t.Errorf("a certificate naming the hosts asked was issued again")
	}
	if _, _, err := ca.EnsureServing("nats", "vmop-nats", []string{"nats", "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	verify(t, certs.CAFile, certFile, "nats")

	// A directory from before the CA kept its key gets a new CA, and a serving
	// certificate it signed.
	if err := os.Remove(filepath.Join(dir, "ca.key")); err != nil {
		t.Fatal(err)
	}
	renewed, err := api.EnsureCertificates(dir, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	verify(t, renewed.CAFile, renewed.CertFile, "127.0.0.1")
}

// verify checks that the certificate in certFile chains to the CA in caFile for host.
func verify(t *testing.T, caFile, certFile, host string) {
	t.Helper()
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(caFile)
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("read CA %s: %v", caFile, err)
	}
	data, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s: no PEM", certFile)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
		t.Errorf("%s for %s: %v", certFile, host, err)
	}
}
