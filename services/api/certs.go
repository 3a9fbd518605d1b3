package api

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certificates names the PEM files of the gateway's own CA and serving certificate.
type Certificates struct {
	CAFile, CertFile, KeyFile string
}

// EnsureCertificates returns the CA and serving certificate kept in dir, creating them on
// first start. They are kept (not re-made on restart) so kubeconfigs written earlier stay
// valid. hosts are the serving certificate's names and IP addresses.
func EnsureCertificates(dir string, hosts []string) (Certificates, error) {
	ca, err := EnsureCA(dir)
	if err != nil {
		return Certificates{}, err
	}
	cert, key, err := ca.EnsureServing("tls", "vmop-api", hosts)
	return Certificates{CAFile: ca.CertFile, CertFile: cert, KeyFile: key}, err
}

// CA is the stack's certificate authority, kept in a directory as ca.crt and ca.key: it
// signs the gateway's serving certificate and NATS's.
type CA struct {
	CertFile, KeyFile string

	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// EnsureCA loads the CA kept in dir, or creates it there (a directory of mode 0700). A
// directory holding a CA certificate without its key (written before the key was kept)
// gets a new CA, and EnsureServing re-issues what the old one signed.
func EnsureCA(dir string) (*CA, error) {
	ca := &CA{CertFile: filepath.Join(dir, "ca.crt"), KeyFile: filepath.Join(dir, "ca.key")}
	if exists(ca.CertFile) && exists(ca.KeyFile) {
		return ca, ca.load()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create certificate dir: %w", err)
	}
	key, cert, der, err := newCA()
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode CA key: %w", err)
	}
	if err := errors.Join(
		writePEM(ca.KeyFile, "EC PRIVATE KEY", keyDER, 0o600),
		writePEM(ca.CertFile, "CERTIFICATE", der, 0o644),
	); err != nil {
		return nil, fmt.Errorf("write CA: %w", err)
	}
	ca.cert, ca.key = cert, key
	return ca, nil
}

func (ca *CA) load() error {
	cert, err := readCertificate(ca.CertFile)
	if err != nil {
		return fmt.Errorf("CA certificate: %w", err)
	}
	block, err := readPEM(ca.KeyFile)
	if err != nil {
		return fmt.Errorf("CA key: %w", err)
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("CA key %s: %w", ca.KeyFile, err)
	}
	ca.cert, ca.key = cert, key
	return nil
}

// EnsureServing returns <name>.crt and <name>.key beside the CA: a serving certificate
// for hosts (names and IP addresses) with commonName cn, signed by the CA. It is issued
// when absent, and again when it is not the CA's or does not name every host.
func (ca *CA) EnsureServing(name, cn string, hosts []string) (certFile, keyFile string, err error) {
	dir := filepath.Dir(ca.CertFile)
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if exists(keyFile) && ca.signedFor(certFile, hosts) {
		return certFile, keyFile, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generate %s key: %w", name, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(5, 0, 0),
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
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return "", "", fmt.Errorf("sign %s certificate: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", fmt.Errorf("encode %s key: %w", name, err)
	}
	return certFile, keyFile, errors.Join(
		writePEM(keyFile, "EC PRIVATE KEY", keyDER, 0o600),
		writePEM(certFile, "CERTIFICATE", der, 0o644),
	)
}

// signedFor reports whether the certificate in file is the CA's and names every host.
func (ca *CA) signedFor(file string, hosts []string) bool {
	cert, err := readCertificate(file)
	if err != nil || cert.CheckSignatureFrom(ca.cert) != nil {
		return false
	}
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func newCA() (*ecdsa.PrivateKey, *x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "vmop-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sign CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	return key, cert, der, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func readPEM(path string) (*pem.Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	return block, nil
}

func readCertificate(path string) (*x509.Certificate, error) {
	block, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(block.Bytes)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
