package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/vmop/vmop/services/api/auth"
)

// credential is one caller the stack creates: its token exists in plain only in the
// kubeconfig, the caller's side; the tokens file keeps its hash.
type credential struct {
	user  auth.User
	token string
}

// ensureCredentials creates, on first start, two callers, the privileged "admin" and the
// ordinary "user" of namespaces default and my-namespace: it writes the kubeconfig with
// their tokens, then the tokens file with only their hashes. On a later start the tokens
// are known only to the kubeconfig, whose server and CA are brought up to date.
func ensureCredentials(tokensPath, kubeconfig, server, caFile string) error {
	if _, err := os.Stat(tokensPath); err == nil {
		return updateKubeconfigCluster(kubeconfig, server, caFile)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("tokens file: %w", err)
	}
	creds := []credential{
		{user: auth.User{Name: "admin", Groups: []string{auth.GroupMasters}}, token: newToken()},
		{user: auth.User{Name: "user", Namespaces: []string{"default", "my-namespace"}}, token: newToken()},
	}
	// The kubeconfig first: a start that stops in between makes both again.
	if err := writeKubeconfig(kubeconfig, server, caFile, creds); err != nil {
		return err
	}
	var tf auth.TokensFile
	for _, c := range creds {
		c.user.TokenHash = auth.HashToken(c.token)
		tf.Users = append(tf.Users, c.user)
	}
	data, err := yaml.Marshal(tf)
	if err != nil {
		return fmt.Errorf("encode tokens: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(tokensPath), 0o700); err != nil {
		return fmt.Errorf("tokens dir: %w", err)
	}
	return writeSecret(tokensPath, data)
}

func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type named = map[string]any

// writeKubeconfig writes a kubeconfig with one context per caller (the first is
// current), trusting the stack's own CA: kubectl sends tokens only over TLS.
func writeKubeconfig(path, server string, caFile string, creds []credential) error {
	var users, contexts []named
	for _, c := range creds {
		users = append(users, named{"name": c.user.Name, "user": named{"token": c.token}})
		ctx := named{"cluster": "vmop", "user": c.user.Name}
		if len(c.user.Namespaces) > 0 {
			ctx["namespace"] = c.user.Namespaces[0]
		}
		contexts = append(contexts, named{"name": c.user.Name, "context": ctx})
	}
	cfg := named{
		"apiVersion":      "v1",
		"kind":            "Config",
		"users":           users,
		"contexts":        contexts,
		"current-context": creds[0].user.Name,
	}
	return writeKubeconfigCluster(path, cfg, server, caFile)
}

// updateKubeconfigCluster points an existing kubeconfig at the API's address and CA,
// keeping its users; there is nothing to update when the operator brought the tokens
// file and no kubeconfig was ever written.
func updateKubeconfigCluster(path, server, caFile string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read kubeconfig: %w", err)
	}
	var cfg named
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return writeKubeconfigCluster(path, cfg, server, caFile)
}

func writeKubeconfigCluster(path string, cfg named, server, caFile string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("read CA: %w", err)
	}
	cfg["clusters"] = []named{{"name": "vmop", "cluster": named{
		"server":                     "https://" + server,
		"certificate-authority-data": base64.StdEncoding.EncodeToString(ca),
	}}}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	return writeSecret(path, data)
}
