package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/services/api"
)

// embeddedNATS is the stack's own nats-server and the identities it accepts.
type embeddedNATS struct {
	*server.Server
	auth *natsAuth
}

// startNATS runs the embedded nats-server, JetStream stored encrypted under
// $VMOP_DATA/nats, listening on VMOP_NATS_ADDR with TLS (a certificate of the stack's CA)
// and accepting only the identities of ensureNATSAuth. A single node syncs every write to
// disk before it is acknowledged (sync_always): a write answered 201 survives a power
// loss. A node of a cluster with replicated streams does not: a write is acknowledged
// once a majority of the nodes stored it, so it survives the loss of any one of them
// (JetStream's own advice for R3; a sync per write cost ~6.5 ms here).
// It sets the streams up as the admin identity, and the events account's mirror of
// EVENTS, before returning. A node of a cluster (VMOP_NATS_CLUSTER_ADDR) keeps its store
// in $VMOP_DATA/nats/<VMOP_NATS_NAME>, beside the keys its peers share, and waits for
// its peers to set up replicated streams.
func startNATS(ctx context.Context, c config) (*embeddedNATS, error) {
	host, portStr, err := net.SplitHostPort(c.NATSAddr)
	if err != nil {
		return nil, fmt.Errorf("VMOP_NATS_ADDR %q: %w", c.NATSAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("VMOP_NATS_ADDR port %q: %w", portStr, err)
	}
	dir := filepath.Join(c.Data, "nats")
	auth, key, err := ensureNATSSecrets(c.Data)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := natsTLS(c, host)
	if err != nil {
		return nil, err
	}
	cluster, routes, err := natsCluster(c, dir, tlsConfig)
	if err != nil {
		return nil, err
	}
	store := dir
	if c.NATSClusterAddr != "" {
		store = filepath.Join(dir, c.NATSName)
	}
	if err := adoptUnsecuredStore(store, auth); err != nil {
		return nil, err
	}
	ns, err := server.NewServer(&server.Options{
		ServerName:       cmp.Or(c.NATSName, "vmop"),
		Host:             host,
		Port:             port,
		JetStream:        true,
		StoreDir:         store,
		JetStreamKey:     key,
		JetStreamCipher:  server.AES,
		SyncAlways:       c.NATSClusterAddr == "" || c.StreamReplicas < 3,
		TrustedOperators: []*jwt.OperatorClaims{auth.operator},
		AccountResolver:  auth.resolver,
		SystemAccount:    auth.system,
		TLSConfig:        tlsConfig,
		Cluster:          cluster,
		Routes:           routes,
		// A CONNECT carries the user's JWT, whose permissions (a service's consumers,
		// subjects and API requests) exceed the 4 KiB default.
		MaxControlLine: 64 * 1024,
		NoSigs:         true,
		NoLog:          true,
	})
	if err != nil {
		return nil, fmt.Errorf("configure nats-server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("nats-server did not become ready")
	}
	e := &embeddedNATS{Server: ns, auth: auth}
	if err := e.setupWhenReady(ctx, c); err != nil {
		ns.Shutdown()
		return nil, err
	}
	return e, nil
}

// ensureNATSSecrets loads or creates what every node of one NATS shares, in
// $VMOP_DATA/nats: the account keys and identities' credentials, JetStream's store key,
// and the stack's CA (copied to ca.crt). `vmop nats-init` writes them before a
// cluster's nodes start, so that the nodes do not race to create them.
func ensureNATSSecrets(data string) (*natsAuth, string, error) {
	dir := filepath.Join(data, "nats")
	auth, err := ensureNATSAuth(dir)
	if err != nil {
		return nil, "", err
	}
	ca, err := api.EnsureCA(filepath.Join(data, "pki"))
	if err != nil {
		return nil, "", fmt.Errorf("certificates: %w", err)
	}
	pem, err := os.ReadFile(ca.CertFile)
	if err != nil {
		return nil, "", fmt.Errorf("read CA: %w", err)
	}
	if old, err := os.ReadFile(filepath.Join(dir, "ca.crt")); err != nil || !bytes.Equal(old, pem) {
		if err := os.WriteFile(filepath.Join(dir, "ca.crt"), pem, 0o644); err != nil {
			return nil, "", fmt.Errorf("copy CA: %w", err)
		}
	}
	key, err := ensureStoreKey(filepath.Join(dir, "jetstream.key"))
	if err != nil {
		return nil, "", err
	}
	return auth, key, nil
}

// setupAttempt bounds one attempt of setupWhenReady. A cluster still electing its leaders
// may leave a JetStream request unanswered, and a request under a context with a deadline
// waits for that deadline, not for the client's default timeout; the attempt must also end
// before the setup user's one-minute JWT (userJWT) expires and the server drops it.
const setupAttempt = 20 * time.Second

// setupWhenReady sets the streams up; a node of a cluster tries again until enough of
// its peers have joined for replicated streams (or ctx ends).
func (e *embeddedNATS) setupWhenReady(ctx context.Context, c config) error {
	for {
		attempt, cancel := context.WithTimeout(ctx, setupAttempt)
		err := e.setup(attempt, c.StreamReplicas)
		cancel()
		if err == nil || c.NATSClusterAddr == "" {
			return err
		}
		slog.Info("NATS cluster not ready for the streams yet", "node", c.NATSName, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the NATS cluster: %w", err)
		case <-time.After(time.Second):
		}
	}
}

// setup creates or updates the main account's streams as the admin identity (no other
// may), and the events account's EVENTS as a passing user of that account.
func (e *embeddedNATS) setup(ctx context.Context, replicas int) error {
	nc, js, err := connect("", e.Server, adminIdentity, natsLogin{Creds: e.auth.credsFile(adminIdentity)})
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := events.Setup(ctx, js, events.WithReplicas(replicas)); err != nil {
		return fmt.Errorf("set up streams: %w", err)
	}
	token, user, err := userJWT(e.auth.events, "vmop-setup")
	if err != nil {
		return fmt.Errorf("events account setup user: %w", err)
	}
	seed, _ := user.Seed()
	enc, ejs, err := connect("", e.Server, "setup", natsLogin{jwt: token, seed: string(seed)})
	if err != nil {
		return err
	}
	defer enc.Close()
	return events.SetupEventsMirror(ctx, ejs)
}

// natsTLS is the server's TLS configuration: a certificate for the listen host, this
// machine's names and loopback, signed by the stack's CA ($VMOP_DATA/pki). Each node of
// a cluster has its own (nats-node-<name>.crt), as each has its own host name.
func natsTLS(c config, host string) (*tls.Config, error) {
	ca, err := api.EnsureCA(filepath.Join(c.Data, "pki"))
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if host != "" && host != "0.0.0.0" && host != "::" {
		hosts = append(hosts, host)
	}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	name := "nats"
	if c.NATSClusterAddr != "" {
		name = "nats-node-" + c.NATSName
	}
	certFile, keyFile, err := ca.EnsureServing(name, "vmop-nats", hosts)
	if err != nil {
		return nil, fmt.Errorf("nats certificate: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("nats certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// ensureStoreKey returns JetStream's encryption key, kept in file (mode 0600) and
// created on first start: without it the store files cannot be read.
func ensureStoreKey(file string) (string, error) {
	key, err := os.ReadFile(file)
	if err == nil {
		return string(key), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("jetstream key: %w", err)
	}
	key = []byte(randomHex(32))
	return string(key), writeSecret(file, key)
}

// randomHex is n random bytes, hex-encoded (crypto/rand does not fail).
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// adoptUnsecuredStore moves the streams of a store written before the server had
// accounts (under the global account "$G") to the main account; the server encrypts
// them on load.
func adoptUnsecuredStore(dir string, auth *natsAuth) error {
	mainPub, _ := auth.main.PublicKey()
	global := filepath.Join(dir, "jetstream", server.DEFAULT_GLOBAL_ACCOUNT)
	main := filepath.Join(dir, "jetstream", mainPub)
	if _, err := os.Stat(global); err != nil {
		return nil
	}
	if _, err := os.Stat(main); err == nil {
		return nil
	}
	if err := os.Rename(global, main); err != nil {
		return fmt.Errorf("move the store to the vmop account: %w", err)
	}
	return nil
}

// natsLogin is how a part authenticates: a credentials file, or a JWT and seed; and the
// CA that signed the server's certificate (none for the embedded server in-process).
type natsLogin struct {
	Creds, CA string
	jwt, seed string
}

// connect dials NATS: the given URL, or the embedded server in-process, as the part
// called name, whose replies arrive under its own inbox prefix.
func connect(url string, ns *server.Server, name string, login natsLogin) (*nats.Conn, jetstream.JetStream, error) {
	opts := []nats.Option{nats.Name("vmop-" + name), nats.MaxReconnects(-1)}
	if id, ok := roleIdentities()[name]; ok {
		opts = append(opts, nats.CustomInboxPrefix(id.Inbox))
	}
	if ns != nil {
		// In-process needs no TLS: a nats:// URL, as the server's tls:// one would ask for it.
		url = "nats://" + ns.Addr().String()
		opts = append(opts, nats.InProcessServer(ns))
	}
	switch {
	case login.Creds != "":
		opts = append(opts, nats.UserCredentials(login.Creds))
	case login.jwt != "":
		opts = append(opts, nats.UserJWTAndSeed(login.jwt, login.seed))
	}
	if login.CA != "" {
		opts = append(opts, nats.RootCAs(login.CA))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to nats %s as %s: %w", url, name, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, js, nil
}

// connectParts connects each named part as its own NATS identity: in-process with the
// embedded server's credentials, or to VMOP_NATS_URL with VMOP_NATS_CREDS. closeAll
// closes every connection.
func connectParts(c config, ns *embeddedNATS, names []string) (conns map[string]jetstream.JetStream, closeAll func(), err error) {
	var ncs []*nats.Conn
	closeAll = func() {
		for _, nc := range ncs {
			nc.Close()
		}
	}
	conns = map[string]jetstream.JetStream{}
	for _, name := range names {
		login, srv := natsLogin{Creds: c.NATSCreds, CA: c.NATSCA}, (*server.Server)(nil)
		if ns != nil {
			login, srv = natsLogin{Creds: ns.auth.credsFile(name)}, ns.Server
		}
		nc, js, err := connect(c.NATSURL, srv, name, login)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		ncs = append(ncs, nc)
		conns[name] = js
	}
	return conns, closeAll, nil
}

// logNATS tells where the embedded NATS listens and where outside systems find their
// credentials.
func logNATS(c config) {
	dir := filepath.Join(c.Data, "nats")
	slog.Info("embedded NATS", "url", "tls://"+clientAddr(c.NATSAddr),
		"events-creds", filepath.Join(dir, eventsIdentity+".creds"), "ca", filepath.Join(dir, "ca.crt"))
}
