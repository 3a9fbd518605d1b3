// Package auth is who may call the gateway and what they may do: callers and their tokens
// (a tokens file of hashes, reloaded when it changes), authentication of bearer tokens,
// privilege, and the authorization rules of api-rules §0.3 and §1.
package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"sigs.k8s.io/yaml"
)

// Groups with a meaning to the gateway.
const (
	GroupMasters  = "system:masters" // privileged, may do everything
	GroupServices = "vmop:services"  // our own services: privileged and service identities
)

// ServicePrefix starts the user name of every service identity: vmop:service:<name>.
const ServicePrefix = "vmop:service:"

// Service names the vmop service u is, if u is a service identity: the only callers that
// write status.
func Service(u User) (name string, ok bool) {
	name, ok = strings.CutPrefix(u.Name, ServicePrefix)
	return name, ok && slices.Contains(u.Groups, GroupServices)
}

// User is an authenticated caller.
type User struct {
	Name       string   `json:"name"`
	TokenHash  string   `json:"tokenHash"` // HashToken of the user's bearer token
	Groups     []string `json:"groups,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"` // where an ordinary user may work
}

// TokensFile is the on-disk list of callers: `users: [{name, tokenHash, groups, namespaces}]`.
// It holds no token, only each token's hash, so reading it grants nothing.
type TokensFile struct {
	Users []User `json:"users"`
}

const tokenHashPrefix = "sha256:"

// HashToken is what a tokens file stores of a bearer token: "sha256:" and the hex SHA-256
// of the token (`printf %s "$TOKEN" | sha256sum`). Tokens are random (the stack makes 24
// bytes), so a plain hash suffices: there is nothing to guess.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return tokenHashPrefix + hex.EncodeToString(sum[:])
}

// LoadTokens reads and checks a tokens file (YAML or JSON).
func LoadTokens(path string) (TokensFile, error) {
	tf, _, err := LoadTokensFile(path)
	return tf, err
}

// ParseTokens decodes a tokens file and checks it: every user has a name and a
// well-formed tokenHash, no two users share a name or a token, and no user carries a
// plain token (files of earlier versions did; they are refused rather than kept readable).
func ParseTokens(data []byte) (TokensFile, error) {
	var raw struct {
		Users []struct {
			User
			Token string `json:"token"`
		} `json:"users"`
	}
	if err := yaml.UnmarshalStrict(data, &raw); err != nil {
		return TokensFile{}, fmt.Errorf("parse: %w", err)
	}
	var tf TokensFile
	names, hashes := map[string]bool{}, map[string]string{}
	for i, u := range raw.Users {
		switch {
		case u.Token != "":
			return TokensFile{}, fmt.Errorf("users[%d] (%s) has a plain token: store its hash instead, "+
				`tokenHash: "sha256:<hex>" from printf %%s "$TOKEN" | sha256sum`, i, u.Name)
		case u.Name == "":
			return TokensFile{}, fmt.Errorf("users[%d] needs a name", i)
		case !validTokenHash(u.TokenHash):
			return TokensFile{}, fmt.Errorf(`users[%d] (%s): tokenHash must be "sha256:" and 64 hex digits`, i, u.Name)
		case names[u.Name]:
			return TokensFile{}, fmt.Errorf("users[%d]: the name %s appears twice", i, u.Name)
		case hashes[u.TokenHash] != "":
			return TokensFile{}, fmt.Errorf("users[%d] (%s) has the token of %s: each user needs their own", i, u.Name, hashes[u.TokenHash])
		}
		names[u.Name], hashes[u.TokenHash] = true, u.Name
		tf.Users = append(tf.Users, u.User)
	}
	return tf, nil
}

func validTokenHash(h string) bool {
	digits, ok := strings.CutPrefix(h, tokenHashPrefix)
	_, err := hex.DecodeString(digits)
	return ok && len(digits) == 2*sha256.Size && err == nil && strings.ToLower(digits) == digits
}

// Authenticator maps bearer tokens to users and decides privilege and access. Its users
// are replaced whole when the tokens file changes.
type Authenticator struct {
	users           atomic.Pointer[map[string]User] // by token hash
	privilegedUsers []string                        // user names privileged by configuration (api-rules §0.3)
}

// NewAuthenticator knows the users of tf; privilegedUsers are privileged by name.
func NewAuthenticator(tf TokensFile, privilegedUsers []string) *Authenticator {
	a := &Authenticator{privilegedUsers: privilegedUsers}
	a.set(tf)
	return a
}

// set replaces the users.
func (a *Authenticator) set(tf TokensFile) {
	users := make(map[string]User, len(tf.Users))
	for _, u := range tf.Users {
		users[u.TokenHash] = u
	}
	a.users.Store(&users)
}

// Authenticate maps an Authorization header ("Bearer <token>") to its user.
func (a *Authenticator) Authenticate(header string) (User, bool) {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || token == "" {
		return User{}, false
	}
	u, ok := (*a.users.Load())[HashToken(token)]
	return u, ok
}

// Privileged callers may do everything.
func (a *Authenticator) Privileged(u User) bool {
	return slices.Contains(u.Groups, GroupMasters) || slices.Contains(u.Groups, GroupServices) ||
		slices.Contains(a.privilegedUsers, u.Name)
}

// mayAccessNamespace: ordinary users work only in the namespaces granted to them.
func (a *Authenticator) mayAccessNamespace(u User, ns string) bool {
	return a.Privileged(u) || slices.Contains(u.Namespaces, ns)
}
