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
	"github.com/vmop/vmop/services/api/auth"
)

// tokensYAML is a tokens file of ordinary users (name, tokenHash) and the test admin.
func tokensYAML(users ...[2]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "users:\n- name: admin\n  tokenHash: %s\n  groups: [%s]\n", auth.HashToken(adminToken), auth.GroupMasters)
	for _, u := range users {
		fmt.Fprintf(&b, "- name: %s\n  tokenHash: %s\n  namespaces: [my-namespace]\n", u[0], u[1])
	}
	return b.String()
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
	alice, bob := [2]string{"alice", auth.HashToken("alice-token")}, [2]string{"bob", auth.HashToken("bob-token")}
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
	alice := [2]string{"alice", auth.HashToken("alice-token")}
	if err := os.WriteFile(path, []byte(tokensYAML(alice, alice)), 0o600); err != nil {
		t.Fatal(err)
	}
	err := api.Run(t.Context(), api.Config{TokensPath: path, DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "twice") || !strings.Contains(err.Error(), path) {
		t.Errorf("Run = %v, want the refusal of %s naming the user twice", err, path)
	}
}
