package inventory

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The files of SimConfig.CertDir: the certificate clients trust, and its key.
const (
	SimCertFile = "tls.crt"
	simKeyFile  = "tls.key"
)

// simCertificate is the embedded vcsim's self-signed ECDSA P-256 serving certificate for
// hosts: the one kept in dir when it is still good for them, else a new one (kept in dir
// when set). Clients verify it by its file or its thumbprint. Without one, vcsim serves
// net/http's RSA test certificate, and every new connection (vcsim opens one per
// content-library deploy for itself) pays an RSA signature: most of the handshake, and a
// large share of the simulator's CPU under load.
func simCertificate(dir string, hosts []string) (tls.Certificate, error) {
	if dir != "" {
		cert, err := tls.LoadX509KeyPair(filepath.Join(dir, SimCertFile), filepath.Join(dir, simKeyFile))
		if err == nil && certServes(cert.Leaf, hosts) {
			return cert, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return tls.Certificate{}, fmt.Errorf("vcsim certificate in %s: %w", dir, err)
		}
	}
	cert, certPEM, keyPEM, err := newSimCertificate(hosts)
	if err != nil || dir == "" {
		return cert, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return cert, fmt.Errorf("vcsim certificate directory: %w", err)
	}
	// The key first: a certificate file without its key would be trusted by clients and
	// replaced at the next start.
	if err := os.WriteFile(filepath.Join(dir, simKeyFile), keyPEM, 0o600); err != nil {
		return cert, fmt.Errorf("vcsim key: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, SimCertFile), certPEM, 0o644); err != nil {
		return cert, fmt.Errorf("vcsim certificate: %w", err)
	}
	return cert, nil
}

// certServes: c is valid for a while yet and names every host.
func certServes(c *x509.Certificate, hosts []string) bool {
	if c == nil || time.Until(c.NotAfter) < 30*24*time.Hour {
		return false
	}
	for _, h := range hosts {
		if c.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func newSimCertificate(hosts []string) (cert tls.Certificate, certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return cert, nil, nil, fmt.Errorf("vcsim key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return cert, nil, nil, fmt.Errorf("vcsim certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "vcsim"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return cert, nil, nil, fmt.Errorf("vcsim certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return cert, nil, nil, fmt.Errorf("vcsim key: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, keyPEM, err
}

// simHosts are the names the certificate must carry to be verified wherever vcsim is
// reached from: loopback, the host it listens on, and this machine's name when it listens
// on every interface (as in a container, reached by its host name).
func simHosts(listen string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return hosts
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if name, err := os.Hostname(); err == nil && name != "" && name != "localhost" {
			hosts = append(hosts, name)
		}
		// vcsim then names itself by one of this machine's addresses, in its own URL and
		// in the content-library upload and download URLs it hands out.
		hosts = append(hosts, interfaceAddrs()...)
	} else if !slices.Contains(hosts, host) {
		hosts = append(hosts, host)
	}
	return hosts
}

// interfaceAddrs are this machine's IPv4 addresses other than loopback.
func interfaceAddrs() []string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var ips []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ips = append(ips, n.IP.String())
		}
	}
	return ips
}
