package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/services/crypto"
	"github.com/vmop/vmop/services/network"
	"github.com/vmop/vmop/services/placement"
	"github.com/vmop/vmop/services/power"
	"github.com/vmop/vmop/services/storage"
)

// Identities of the embedded NATS besides the parts' own (roleIdentities): the operators'
// and the outside systems'.
const (
	adminIdentity  = "admin"  // the main account without restriction: the only one that may delete or purge a stream
	eventsIdentity = "events" // the events account's reader: EVENTS only
)

// natsAuth is the embedded NATS's decentralized authentication, kept in $VMOP_DATA/nats:
// an operator, a system account, the main account (vmop's streams) and the events account
// (outside systems), whose keys are created on first start; one <identity>.creds per
// identity, signed again when its permissions change.
type natsAuth struct {
	dir      string
	operator *jwt.OperatorClaims
	system   string // the system account's public key
	resolver *server.MemAccResolver
	main     nkeys.KeyPair // signs the main account's users
	events   nkeys.KeyPair // signs the events account's users
}

// roleIdentities are the permissions of each part of the stack, by role name.
func roleIdentities() map[string]events.Permissions {
	services := []events.ServiceAccess{placement.Access(), power.Access(), storage.Access(), network.Access(), crypto.Access()}
	ids := map[string]events.Permissions{"api": events.GatewayPermissions(services...)}
	for _, s := range services {
		ids[s.Service] = s.Permissions()
	}
	return ids
}

// ensureNATSAuth loads or creates the keys in dir and writes every identity's credentials.
func ensureNATSAuth(dir string) (*natsAuth, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nats dir: %w", err)
	}
	var keys [4]nkeys.KeyPair
	for i, k := range []struct {
		file   string
		create func() (nkeys.KeyPair, error)
	}{
		{"operator.nk", nkeys.CreateOperator},
		{"account-system.nk", nkeys.CreateAccount},
		{"account-vmop.nk", nkeys.CreateAccount},
		{"account-events.nk", nkeys.CreateAccount},
	} {
		kp, err := ensureKey(filepath.Join(dir, k.file), k.create)
		if err != nil {
			return nil, err
		}
		keys[i] = kp
	}
	a := &natsAuth{dir: dir, resolver: &server.MemAccResolver{}, main: keys[2], events: keys[3]}
	if err := a.sign(keys[0], keys[1]); err != nil {
		return nil, err
	}
	ids := roleIdentities()
	ids[adminIdentity] = events.Permissions{}
	for name, p := range ids {
		if err := a.ensureCreds(name, a.main, p); err != nil {
			return nil, err
		}
	}
	if err := a.ensureCreds(eventsIdentity, a.events, events.EventsReaderPermissions()); err != nil {
		return nil, err
	}
	return a, nil
}

// sign issues the operator's and the accounts' JWTs (again at every start, so they follow
// this version's exports and imports) into the resolver.
func (a *natsAuth) sign(operator, system nkeys.KeyPair) error {
	opPub, _ := operator.PublicKey()
	sysPub, _ := system.PublicKey()
	mainPub, _ := a.main.PublicKey()
	eventsPub, _ := a.events.PublicKey()
	a.system = sysPub

	unlimited := jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	mainAcc := jwt.NewAccountClaims(mainPub)
	mainAcc.Name = "vmop"
	mainAcc.Limits.JetStreamLimits = unlimited
	eventsAcc := jwt.NewAccountClaims(eventsPub)
	eventsAcc.Name = "events"
	eventsAcc.Limits.JetStreamLimits = unlimited
	for _, s := range events.EventsShares() {
		typ := jwt.Stream
		if s.Service {
			typ = jwt.Service
		}
		mainAcc.Exports.Add(&jwt.Export{Name: s.Subject, Subject: jwt.Subject(s.Subject), Type: typ})
		eventsAcc.Imports.Add(&jwt.Import{Name: s.Subject, Account: mainPub, Subject: jwt.Subject(s.Subject),
			LocalSubject: jwt.RenamingSubject(s.Local), Type: typ})
	}
	sysAcc := jwt.NewAccountClaims(sysPub)
	sysAcc.Name = "system"
	for _, acc := range []*jwt.AccountClaims{sysAcc, mainAcc, eventsAcc} {
		token, err := acc.Encode(operator)
		if err != nil {
			return fmt.Errorf("sign account %s: %w", acc.Name, err)
		}
		if err := a.resolver.Store(acc.Subject, token); err != nil {
			return fmt.Errorf("store account %s: %w", acc.Name, err)
		}
	}
	op := jwt.NewOperatorClaims(opPub)
	op.Name = "vmop"
	op.SystemAccount = sysPub
	token, err := op.Encode(operator)
	if err != nil {
		return fmt.Errorf("sign operator: %w", err)
	}
	if a.operator, err = jwt.DecodeOperatorClaims(token); err != nil {
		return fmt.Errorf("decode operator: %w", err)
	}
	return nil
}

// credsFile is where an identity's credentials are.
func (a *natsAuth) credsFile(identity string) string {
	return filepath.Join(a.dir, identity+".creds")
}

// ensureCreds writes identity's credentials (mode 0600) unless the file holds them already
// with these permissions; the user key is kept from an earlier start.
func (a *natsAuth) ensureCreds(identity string, account nkeys.KeyPair, p events.Permissions) error {
	file := a.credsFile(identity)
	accPub, _ := account.PublicKey()
	want := jwt.Permissions{
		Pub: jwt.Permission{Allow: p.Publish, Deny: p.DenyPublish},
		Sub: jwt.Permission{Allow: p.Subscribe, Deny: p.DenySubscribe},
	}
	user, claims, err := readCreds(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if user, err = nkeys.CreateUser(); err != nil {
			return fmt.Errorf("%s user key: %w", identity, err)
		}
	case err != nil:
		return fmt.Errorf("%s credentials: %w", identity, err)
	case claims.Issuer == accPub && samePermissions(claims.Permissions, want):
		return nil
	}
	userPub, _ := user.PublicKey()
	uc := jwt.NewUserClaims(userPub)
	uc.Name = identity
	uc.Permissions = want
	token, err := uc.Encode(account)
	if err != nil {
		return fmt.Errorf("sign %s: %w", identity, err)
	}
	seed, _ := user.Seed()
	creds, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		return fmt.Errorf("format %s credentials: %w", identity, err)
	}
	return writeSecret(file, creds)
}

// userJWT signs a short-lived user of account with full rights, never written anywhere:
// the stack's own hand for setting up the events account's stream.
func userJWT(account nkeys.KeyPair, name string) (string, nkeys.KeyPair, error) {
	user, err := nkeys.CreateUser()
	if err != nil {
		return "", nil, err
	}
	pub, _ := user.PublicKey()
	uc := jwt.NewUserClaims(pub)
	uc.Name = name
	uc.Expires = time.Now().Add(time.Minute).Unix()
	token, err := uc.Encode(account)
	return token, user, err
}

func readCreds(file string) (nkeys.KeyPair, *jwt.UserClaims, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	token, err := jwt.ParseDecoratedJWT(data)
	if err != nil {
		return nil, nil, err
	}
	claims, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return nil, nil, err
	}
	user, err := jwt.ParseDecoratedUserNKey(data)
	if err != nil {
		return nil, nil, err
	}
	return user, claims, nil
}

func samePermissions(a, b jwt.Permissions) bool {
	norm := func(l jwt.StringList) []string { return slices.Sorted(slices.Values(l)) }
	return slices.Equal(norm(a.Pub.Allow), norm(b.Pub.Allow)) && slices.Equal(norm(a.Pub.Deny), norm(b.Pub.Deny)) &&
		slices.Equal(norm(a.Sub.Allow), norm(b.Sub.Allow)) && slices.Equal(norm(a.Sub.Deny), norm(b.Sub.Deny)) &&
		reflect.DeepEqual(a.Resp, b.Resp)
}

// ensureKey returns the key whose seed is in file, creating it first (mode 0600).
func ensureKey(file string, create func() (nkeys.KeyPair, error)) (nkeys.KeyPair, error) {
	seed, err := os.ReadFile(file)
	if err == nil {
		kp, err := nkeys.FromSeed(seed)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", file, err)
		}
		return kp, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("key %s: %w", file, err)
	}
	kp, err := create()
	if err != nil {
		return nil, fmt.Errorf("create key %s: %w", file, err)
	}
	if seed, err = kp.Seed(); err != nil {
		return nil, err
	}
	return kp, writeSecret(file, seed)
}
