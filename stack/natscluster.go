package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// routeUser is the name the nodes of a cluster present to each other's route listener.
const routeUser = "vmop-route"

// natsCluster is the route side of a clustered node (VMOP_NATS_CLUSTER_ADDR and
// VMOP_NATS_ROUTES): the nodes dial each other over TLS, verifying the peer's certificate
// against the stack's CA, and authenticate with the route secret the nodes share
// ($VMOP_DATA/nats/route.secret). No cluster address: a single node, nothing to do.
func natsCluster(c config, dir string, tlsConfig *tls.Config) (server.ClusterOpts, []*url.URL, error) {
	if c.NATSClusterAddr == "" {
		return server.ClusterOpts{}, nil, nil
	}
	if !plainName(c.NATSName) {
		return server.ClusterOpts{}, nil, fmt.Errorf("VMOP_NATS_NAME %q: a node of a cluster needs a name of letters, digits, '-' and '_' (its store's directory)", c.NATSName)
	}
	host, portStr, err := net.SplitHostPort(c.NATSClusterAddr)
	if err != nil {
		return server.ClusterOpts{}, nil, fmt.Errorf("VMOP_NATS_CLUSTER_ADDR %q: %w", c.NATSClusterAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return server.ClusterOpts{}, nil, fmt.Errorf("VMOP_NATS_CLUSTER_ADDR port %q: %w", portStr, err)
	}
	secret, err := ensureRouteSecret(filepath.Join(dir, "route.secret"))
	if err != nil {
		return server.ClusterOpts{}, nil, err
	}
	routes, err := parseRoutes(c.NATSRoutes, secret)
	if err != nil {
		return server.ClusterOpts{}, nil, err
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return server.ClusterOpts{}, nil, fmt.Errorf("the CA for routes: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return server.ClusterOpts{}, nil, errors.New("the CA for routes: no certificate")
	}
	routeTLS := tlsConfig.Clone()
	routeTLS.RootCAs = pool
	return server.ClusterOpts{
		Name: "vmop", Host: host, Port: port,
		Username: routeUser, Password: secret,
		TLSConfig: routeTLS, TLSTimeout: 5,
		// Clients keep the node names they were given (VMOP_NATS_URL), which the
		// certificates name, instead of learning the nodes' addresses.
		NoAdvertise: true,
	}, routes, nil
}

// parseRoutes reads VMOP_NATS_ROUTES, the nodes' nats-route:// URLs (a node may list
// itself: the server skips it), each given the route secret.
func parseRoutes(list, secret string) ([]*url.URL, error) {
	var routes []*url.URL
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "nats-route" || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("VMOP_NATS_ROUTES: %q is not nats-route://host:port (without credentials: the nodes share route.secret)", s)
		}
		u.User = url.UserPassword(routeUser, secret)
		routes = append(routes, u)
	}
	if len(routes) == 0 {
		return nil, errors.New("VMOP_NATS_ROUTES is required with VMOP_NATS_CLUSTER_ADDR: the nodes' nats-route://host:port")
	}
	return routes, nil
}

// ensureRouteSecret returns the nodes' shared route password, created on first start
// (by `vmop nats-init`, before the nodes start from the same directory).
func ensureRouteSecret(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("route secret: %w", err)
	}
	secret := randomHex(32)
	return secret, writeSecret(file, []byte(secret))
}

// plainName: letters, digits, '-' and '_' only, not empty.
func plainName(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == ""
}
