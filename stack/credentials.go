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

	"github.com/vmop/vmop/services/api"
)

// ensureTokens returns the tokens file, creating it on first start with two callers: the
// privileged "admin" and the ordinary "user" of namespaces default and my-namespace.
func ensureTokens(path string) (api.TokensFile, error) {
	if _, err := os.Stat(path); err == nil {
		return api.LoadTokens(path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return api.TokensFile{}, fmt.Errorf("tokens file: %w", err)
	}
	tf := api.TokensFile{Users: []api.User{
		{Name: "admin", Token: newToken(), Groups: []string{api.GroupMasters}},
		{Name: "user", Token: newToken(), Namespaces: []string{"default", "my-namespace"}},
	}}
	data, err := yaml.Marshal(tf)
	if err != nil {
		return tf, fmt.Errorf("encode tokens: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return tf, fmt.Errorf("tokens dir: %w", err)
	}
	return tf, os.WriteFile(path, data, 0o600)
}

func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writeKubeconfig writes a kubeconfig with one context per user of the tokens file (the
// first is current), trusting the stack's own CA: kubectl sends tokens only over TLS.
func writeKubeconfig(path, server string, caFile string, tf api.TokensFile) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("read CA: %w", err)
	}
	type named = map[string]any
	var users, contexts []named
	for _, u := range tf.Users {
		users = append(users, named{"name": u.Name, "user": named{"token": u.Token}})
		ctx := named{"cluster": "vmop", "user": u.Name}
		if len(u.Namespaces) > 0 {
			ctx["namespace"] = u.Namespaces[0]
		}
		contexts = append(contexts, named{"name": u.Name, "context": ctx})
	}
	cfg := named{
		"apiVersion": "v1",
		"kind":       "Config",
		"clusters": []named{{"name": "vmop", "cluster": named{
			"server":                     "https://" + server,
			"certificate-authority-data": base64.StdEncoding.EncodeToString(ca),
		}}},
		"users":           users,
		"contexts":        contexts,
		"current-context": tf.Users[0].Name,
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	return os.WriteFile(path, data, 0o600)
}
