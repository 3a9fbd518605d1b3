package auth_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vmop/vmop/services/api/auth"
)

// tokensYAML is a tokens file of ordinary users (name, tokenHash) and an admin.
func tokensYAML(users ...[2]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "users:\n- name: admin\n  tokenHash: %s\n  groups: [%s]\n", auth.HashToken("admin-token"), auth.GroupMasters)
	for _, u := range users {
		fmt.Fprintf(&b, "- name: %s\n  tokenHash: %s\n  namespaces: [my-namespace]\n", u[0], u[1])
	}
	return b.String()
}

// A tokens file holds hashes only; one with a plain token, a malformed hash or a user
// or token twice is refused with the reason, and the refusal names no token.
func TestTokensFileIsChecked(t *testing.T) {
	if got, want := auth.HashToken("abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Fatalf("HashToken(abc) = %q, want %q (printf %%s abc | sha256sum)", got, want)
	}
	alice, bob := auth.HashToken("alice-token"), auth.HashToken("bob-token")
	if _, err := auth.ParseTokens([]byte(tokensYAML([2]string{"alice", alice}, [2]string{"bob", bob}))); err != nil {
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
		_, err := auth.ParseTokens([]byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %v, want an error naming %q", name, err, tc.reason)
		}
		if err != nil && strings.Contains(err.Error(), "alice-token") {
			t.Errorf("%s: the error shows a token: %v", name, err)
		}
	}
}
