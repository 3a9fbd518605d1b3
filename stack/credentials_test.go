package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmop/vmop/services/api"
	"github.com/vmop/vmop/services/api/auth"
)

// The first start writes the callers' tokens to the kubeconfig and only their hashes to
// the tokens file; a later start keeps both, pointing the kubeconfig at the current
// address.
func TestCredentialsStoreOnlyHashes(t *testing.T) {
	dir := t.TempDir()
	certs, err := api.EnsureCertificates(filepath.Join(dir, "pki"), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	tokensPath, kubeconfig := filepath.Join(dir, "tokens.yaml"), filepath.Join(dir, "kubeconfig")
	if err := ensureCredentials(tokensPath, kubeconfig, "127.0.0.1:8080", certs.CAFile); err != nil {
		t.Fatal(err)
	}
	kc, err := readKubeconfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	tf, err := auth.LoadTokens(tokensPath)
	if err != nil {
		t.Fatalf("the tokens file the stack writes: %v", err)
	}
	stored, err := os.ReadFile(tokensPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(tf.Users) != 2 || len(kc.tokens) != 2 {
		t.Fatalf("%d users in the tokens file, %d in the kubeconfig; want admin and user in both", len(tf.Users), len(kc.tokens))
	}
	for _, u := range tf.Users {
		token := kc.tokens[u.Name]
		if token == "" || u.TokenHash != auth.HashToken(token) {
			t.Errorf("%s: tokenHash %q does not hash the kubeconfig's token", u.Name, u.TokenHash)
		}
		if strings.Contains(string(stored), token) {
			t.Errorf("the tokens file holds %s's plain token", u.Name)
		}
	}
	for _, p := range []string{tokensPath, kubeconfig} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", p, err, info.Mode().Perm())
		}
	}

	if err := ensureCredentials(tokensPath, kubeconfig, "127.0.0.1:9090", certs.CAFile); err != nil {
		t.Fatal(err)
	}
	again, err := readKubeconfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if again.server != "https://127.0.0.1:9090" || again.tokens["admin"] != kc.tokens["admin"] || again.tokens["user"] != kc.tokens["user"] {
		t.Errorf("after a restart on another address: server %s, tokens kept %v; want the new address and the same tokens",
			again.server, again.tokens["admin"] == kc.tokens["admin"])
	}
	if after, _ := os.ReadFile(tokensPath); string(after) != string(stored) {
		t.Errorf("a restart rewrote the tokens file")
	}
}

func TestMaxWatchesPerUserConfig(t *testing.T) {
	for _, tt := range []struct {
		env     string
		want    int
		wantErr bool
	}{{"", 100, false}, {"5", 5, false}, {"0", 0, true}, {"many", 0, true}} {
		c, err := loadConfig(func(k string) string {
			if k == "VMOP_MAX_WATCHES_PER_USER" {
				return tt.env
			}
			return ""
		})
		if (err != nil) != tt.wantErr || c.MaxWatchesPerUser != tt.want {
			t.Errorf("VMOP_MAX_WATCHES_PER_USER=%q: %d, %v; want %d, error %v", tt.env, c.MaxWatchesPerUser, err, tt.want, tt.wantErr)
		}
	}
}
