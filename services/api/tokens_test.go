package api_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmop/vmop/services/api"
)

// tokensYAML is a tokens file of ordinary users (name, tokenHash) and the test admin.
func tokensYAML(users ...[2]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "users:\n- name: admin\n  tokenHash: %s\n  groups: [%s]\n", api.HashToken(adminToken), api.GroupMasters)
	for _, u := range users {
		fmt.Fprintf(&b, "- name: %s\n  tokenHash: %s\n  namespaces: [my-namespace]\n", u[0], u[1])
	}
	return b.String()
}

// A tokens file holds hashes only; one with a plain token, a malformed hash or a user
// or token twice is refused with the reason, and the refusal names no token.
func TestTokensFileIsChecked(t *testing.T) {
	if got, want := api.HashToken("abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Fatalf("HashToken(abc) = %q, want %q (printf %%s abc | sha256sum)", got, want)
	}
	alice, bob := api.HashToken("alice-token"), api.HashToken("bob-token")
	if _, err := api.ParseTokens([]byte(tokensYAML([2]string{"alice", alice}, [2]string{"bob", bob}))); err != nil {
		t.Fatalf("a good file: %v", err)
	}
	for name, tc := range map[string]struct{ file, reason string }{
		"plain token":     {"users:\n- name: alice\n  token: alice-token\n", "plain token"},
		"malformed hash":  {tokensYAML([2]string{"alice", "sha256:abc"}), "64 hex digits"},
		"no hash":         {"users:\n- name: alice\n", "tokenHash"},
		"name twice":      {tokensYAML([2]string{"alice", alice}, [2]string{"alice", bob}), "twice"},
		"token twice":     {tokensYAML([2]string{"alice", alice}, [2]string{"bob", alice}), "token of alice"},
		"unknown field":   {"users:\n- name: alice\n  tokenHash: " + alice + "\n  group: x\n", "unknown field"},
		"not a yaml list": {"users: alice", "parse"},
	} {
		_, err := api.ParseTokens([]byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %v, want an error naming %q", name, err, tc.reason)
		}
		if err != nil && strings.Contains(err.Error(), "alice-token") {
			t.Errorf("%s: the error shows a token: %v", name, err)
		}
	}
}

// The gateway reloads its tokens file when it changes, without a restart: a new user's
// token works, a removed one no longer does; a changed file that is refused keeps the
// users it had, and says why in the log, without a token.
func TestTokensFileIsReloaded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.yaml")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path+".new", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil { // as an editor replaces a file
			t.Fatal(err)
		}
	}
	alice, bob := [2]string{"alice", api.HashToken("alice-token")}, [2]string{"bob", api.HashToken("bob-token")}
	write(tokensYAML(alice))
	var logs syncBuffer
	g := startGatewayWith(t, newStreams(t), t.TempDir(), func(c *api.Config) {
		c.TokensPath = path
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	status := func(token string) int {
		code, _ := g.do("GET", classes, token, nil)
		return code
	}
	if status("alice-token") != http.StatusOK || status("bob-token") != http.StatusUnauthorized {
		t.Fatalf("at start: alice %d, bob %d; want 200, 401", status("alice-token"), status("bob-token"))
	}
	write(tokensYAML(bob))
	eventually(t, "bob added and alice removed", func() bool {
		return status("bob-token") == http.StatusOK && status("alice-token") == http.StatusUnauthorized
	})
	write(tokensYAML(bob, [2]string{"mallory", bob[1]}))
	eventually(t, "the refused file logged", func() bool { return strings.Contains(logs.String(), "tokens file not reloaded") })
	if status("bob-token") != http.StatusOK {
		t.Errorf("after a refused file: bob %d, want 200 (the previous users stay)", status("bob-token"))
	}
	if strings.Contains(logs.String(), "bob-token") {
		t.Errorf("the log shows a token:\n%s", logs.String())
	}
}

// A gateway whose tokens file is refused does not start, and says why.
func TestGatewayWithARefusedTokensFileDoesNotStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.yaml")
	alice := [2]string{"alice", api.HashToken("alice-token")}
	if err := os.WriteFile(path, []byte(tokensYAML(alice, alice)), 0o600); err != nil {
		t.Fatal(err)
	}
	err := api.Run(t.Context(), api.Config{TokensPath: path, DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "twice") || !strings.Contains(err.Error(), path) {
		t.Errorf("Run = %v, want the refusal of %s naming the user twice", err, path)
	}
}
