package main

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// defaultVCSimPassword guards the embedded vcsim when no password is set; an outside
// vCenter never gets a default.
const defaultVCSimPassword = "vmop-secret"

// vcenterTLS is how the certificate of the vCenter at VMOP_VCENTER_URL is trusted: the CAs
// in VMOP_VCENTER_CA_FILE (else the system's), or the certificate whose thumbprint is
// VMOP_VCENTER_THUMBPRINT; VMOP_VCENTER_INSECURE=true alone skips verification.
type vcenterTLS struct {
	CAFile     string
	Thumbprint string
	Insecure   bool
}

// loadVCenter completes the vCenter settings. With VMOP_VCENTER_URL a password is
// required: the URL's own, VMOP_VCENTER_PASSWORD or the file VMOP_VCENTER_PASSWORD_FILE
// names. Without it the embedded vcsim is used, trusted by its own certificate, so the
// TLS settings would be ignored: they are refused instead.
func (c *config) loadVCenter(getenv func(string) string) error {
	password, err := withSecretFile(c.VCenterPassword, getenv, "VMOP_VCENTER_PASSWORD")
	if err != nil {
		return err
	}
	c.VCenterTLS = vcenterTLS{CAFile: getenv("VMOP_VCENTER_CA_FILE"), Thumbprint: getenv("VMOP_VCENTER_THUMBPRINT")}
	if v := getenv("VMOP_VCENTER_INSECURE"); v != "" {
		if c.VCenterTLS.Insecure, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("VMOP_VCENTER_INSECURE %q: want true or false", v)
		}
	}
	if c.VCenterURL == "" {
		if c.VCenterTLS != (vcenterTLS{}) {
			return errors.New("VMOP_VCENTER_CA_FILE, _THUMBPRINT and _INSECURE apply to VMOP_VCENTER_URL: the embedded vcsim is trusted by its own certificate")
		}
		c.VCenterPassword = cmp.Or(password, defaultVCSimPassword)
		return nil
	}
	if c.VCenterTLS.Insecure && (c.VCenterTLS.CAFile != "" || c.VCenterTLS.Thumbprint != "") {
		return errors.New("VMOP_VCENTER_INSECURE=true contradicts VMOP_VCENTER_CA_FILE and VMOP_VCENTER_THUMBPRINT: set one way to trust vCenter")
	}
	u, err := parseVCenterURL(c.VCenterURL)
	if err != nil {
		return err
	}
	if _, inURL := u.User.Password(); !inURL && password == "" {
		return errors.New("VMOP_VCENTER_URL is set but no password: set VMOP_VCENTER_PASSWORD or VMOP_VCENTER_PASSWORD_FILE (or user:password in the URL)")
	}
	c.VCenterPassword = password
	return nil
}

// withSecretFile is v, the value of key, or the content of the file key_FILE names
// (without its final newline): not both.
func withSecretFile(v string, getenv func(string) string, key string) (string, error) {
	file := getenv(key + "_FILE")
	switch {
	case file == "":
		return v, nil
	case v != "":
		return "", fmt.Errorf("%s and %s_FILE are both set: set one", key, key)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s_FILE: %w", key, err)
	}
	v = strings.TrimRight(string(data), "\r\n")
	if v == "" {
		return "", fmt.Errorf("%s_FILE %s is empty", key, file)
	}
	return v, nil
}

// parseVCenterURL parses VMOP_VCENTER_URL without repeating it in the error: it may carry
// a password.
func parseVCenterURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("VMOP_VCENTER_URL: %w", err)
	}
	if u.Host == "" {
		return nil, errors.New("VMOP_VCENTER_URL: no host; want e.g. https://vcenter.example.com/sdk")
	}
	return u, nil
}
