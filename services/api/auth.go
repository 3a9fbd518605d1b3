package api

import (
	"crypto/subtle"
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Groups with a meaning to the gateway.
const (
	GroupMasters  = "system:masters" // privileged, may do everything
	GroupServices = "vmop:services"  // our own services: privileged and service identities
)

// User is an authenticated caller.
type User struct {
	Name       string   `json:"name"`
	Token      string   `json:"token"`
	Groups     []string `json:"groups,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"` // where an ordinary user may work
}

// TokensFile is the on-disk list of callers: `users: [{name, token, groups, namespaces}]`.
type TokensFile struct {
	Users []User `json:"users"`
}

// LoadTokens reads a tokens file (YAML or JSON).
func LoadTokens(path string) (TokensFile, error) {
	var tf TokensFile
	data, err := os.ReadFile(path)
	if err != nil {
		return tf, fmt.Errorf("read tokens file: %w", err)
	}
	if err := yaml.UnmarshalStrict(data, &tf); err != nil {
		return tf, fmt.Errorf("parse tokens file %s: %w", path, err)
	}
	for i, u := range tf.Users {
		if u.Name == "" || u.Token == "" {
			return tf, fmt.Errorf("tokens file %s: users[%d] needs a name and a token", path, i)
		}
	}
	return tf, nil
}

// authenticator maps bearer tokens to users and decides privilege.
type authenticator struct {
	users           []User
	privilegedUsers []string // user names privileged by configuration (api-rules §0.3)
}

func (a *authenticator) authenticate(header string) (User, bool) {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || token == "" {
		return User{}, false
	}
	for _, u := range a.users {
		if subtle.ConstantTimeCompare([]byte(u.Token), []byte(token)) == 1 {
			return u, true
		}
	}
	return User{}, false
}

func (a *authenticator) privileged(u User) bool {
	return slices.Contains(u.Groups, GroupMasters) || slices.Contains(u.Groups, GroupServices) ||
		slices.Contains(a.privilegedUsers, u.Name)
}

// mayAccessNamespace: ordinary users work only in the namespaces granted to them.
func (a *authenticator) mayAccessNamespace(u User, ns string) bool {
	return a.privileged(u) || slices.Contains(u.Namespaces, ns)
}
