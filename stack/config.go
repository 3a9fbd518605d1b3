package main

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// config is the stack's whole configuration, read from the environment.
type config struct {
	Addr      string // VMOP_ADDR: the API's HTTPS address
	Data      string // VMOP_DATA: state directory (JetStream, read model, certificates, kubeconfig)
	NATSAddr  string // VMOP_NATS_ADDR: where the embedded NATS listens
	VCSimAddr string // VMOP_VCSIM_ADDR: where the embedded vcsim listens
	// VCSimExport (VMOP_VCSIM_EXPORT) is where role vcsim copies its certificate, without
	// its key, for the parts that trust it (compose shares that directory alone).
	VCSimExport string
	NATSURL     string // VMOP_NATS_URL: use this NATS instead of the embedded one
	NATSCreds   string // VMOP_NATS_CREDS: a single role's NATS credentials (a .creds file)
	NATSCA      string // VMOP_NATS_CA: the CA that signed NATS's certificate (PEM)
	// A node of a NATS cluster (natscluster.go): its name, where it listens for its
	// peers' routes, the peers' route URLs; nats-init's export directory.
	NATSName, NATSClusterAddr, NATSRoutes, NATSExport string
	// BalanceBackends (VMOP_BALANCE_BACKENDS) are the gateways `vmop balance` forwards
	// VMOP_ADDR's connections to (balance.go).
	BalanceBackends []string
	VCenterURL      string // VMOP_VCENTER_URL (+ _USER, _PASSWORD): use this vCenter instead of vcsim
	VCenterUser     string
	VCenterPassword string
	PrivilegedUsers []string // VMOP_PRIVILEGED_USERS: comma-separated user names
	TokensFile      string   // VMOP_TOKENS_FILE: default $VMOP_DATA/tokens.yaml, created when absent
	// TrySoftTimeout (VMOP_TRYSOFT_TIMEOUT, a Go duration, default 5m) is how long a
	// TrySoft power-off, suspend or restart waits for the guest before acting hard.
	TrySoftTimeout time.Duration
	// MaxWatchesPerUser (VMOP_MAX_WATCHES_PER_USER, default 100) is how many watches one
	// user may have open on the API; more are 429.
	MaxWatchesPerUser int
	// VCenterTLS (VMOP_VCENTER_CA_FILE, _THUMBPRINT, _INSECURE) is how the certificate of
	// VMOP_VCENTER_URL is trusted: config_vcenter.go.
	VCenterTLS vcenterTLS
	// GuestPoll (VMOP_GUEST_POLL, a Go duration, default 10s) is how often network reads
	// the guests of all VMs again for what they report (addresses, VMware Tools).
	GuestPoll time.Duration
	// MetricsAddr (VMOP_METRICS_ADDR) is where the services' /metrics and /healthz are
	// served; "" serves none.
	MetricsAddr string
	// StreamReplicas (VMOP_STREAM_REPLICAS, 1 or 3, default 1) is how many replicas the
	// streams (and the key-value buckets, which follow them) have; never lowered.
	StreamReplicas int
}

// loadConfig reads the settings (settings.go: their defaults and meanings) from getenv.
func loadConfig(lookup func(string) string) (config, error) {
	getenv := withDefaults(lookup)
	c := config{
		Addr:            getenv("VMOP_ADDR"),
		Data:            getenv("VMOP_DATA"),
		NATSAddr:        getenv("VMOP_NATS_ADDR"),
		VCSimAddr:       getenv("VMOP_VCSIM_ADDR"),
		VCSimExport:     getenv("VMOP_VCSIM_EXPORT"),
		NATSURL:         getenv("VMOP_NATS_URL"),
		NATSCreds:       getenv("VMOP_NATS_CREDS"),
		NATSCA:          getenv("VMOP_NATS_CA"),
		NATSName:        getenv("VMOP_NATS_NAME"),
		NATSClusterAddr: getenv("VMOP_NATS_CLUSTER_ADDR"),
		NATSRoutes:      getenv("VMOP_NATS_ROUTES"),
		NATSExport:      getenv("VMOP_NATS_EXPORT"),
		VCenterURL:      getenv("VMOP_VCENTER_URL"),
		VCenterUser:     getenv("VMOP_VCENTER_USER"),
		VCenterPassword: getenv("VMOP_VCENTER_PASSWORD"), // or _FILE, or the default: loadVCenter
		MetricsAddr:     getenv("VMOP_METRICS_ADDR"),
	}
	if err := c.loadVCenter(getenv); err != nil {
		return c, err
	}
	for _, b := range strings.Split(getenv("VMOP_BALANCE_BACKENDS"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.BalanceBackends = append(c.BalanceBackends, b)
		}
	}
	for _, u := range strings.Split(getenv("VMOP_PRIVILEGED_USERS"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			c.PrivilegedUsers = append(c.PrivilegedUsers, u)
		}
	}
	if v := getenv("VMOP_TRYSOFT_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("VMOP_TRYSOFT_TIMEOUT %q: want a positive duration such as 5m", v)
		}
		c.TrySoftTimeout = d
	}
	if v := getenv("VMOP_MAX_WATCHES_PER_USER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("VMOP_MAX_WATCHES_PER_USER %q: want a positive number", v)
		}
		c.MaxWatchesPerUser = n
	}
	if v := getenv("VMOP_GUEST_POLL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("VMOP_GUEST_POLL %q: want a positive duration such as 10s", v)
		}
		c.GuestPoll = d
	}
	switch v := getenv("VMOP_STREAM_REPLICAS"); v {
	case "1", "3":
		c.StreamReplicas, _ = strconv.Atoi(v)
	default:
		return c, fmt.Errorf("VMOP_STREAM_REPLICAS %q: want 1 (one NATS server) or 3 (a three-node cluster)", v)
	}
	abs, err := filepath.Abs(c.Data)
	if err != nil {
		return c, fmt.Errorf("VMOP_DATA: %w", err)
	}
	c.Data = abs
	c.TokensFile = cmp.Or(getenv("VMOP_TOKENS_FILE"), filepath.Join(c.Data, "tokens.yaml"))
	return c, nil
}
