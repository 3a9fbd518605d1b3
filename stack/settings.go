package main

import (
	"fmt"
	"strings"
)

// setting is one VMOP_* variable: the single source of its default, its flag and its
// documentation (--help, and a test keeps README's table in step).
type setting struct {
	Env     string
	Default string // applied when neither the variable nor the flag is set
	Meaning string
	NoFlag  bool // a secret: a command line is visible to every user of the machine
}

var settings = []setting{
	{Env: "VMOP_ADDR", Default: "127.0.0.1:8080", Meaning: "the API's HTTPS address"},
	{Env: "VMOP_DATA", Default: ".vmop", Meaning: "state directory (JetStream, read model, certificates, kubeconfig)"},
	{Env: "VMOP_NATS_ADDR", Default: "127.0.0.1:4222", Meaning: "where the embedded NATS listens, TLS only"},
	{Env: "VMOP_VCSIM_ADDR", Default: "127.0.0.1:8989", Meaning: "where the embedded vcsim listens"},
	{Env: "VMOP_VCSIM_EXPORT", Meaning: "role vcsim copies its certificate (not its key) into <this>/tls.crt"},
	{Env: "VMOP_NATS_URL", Meaning: "use this NATS instead of the embedded one (a single role always needs it)"},
	{Env: "VMOP_NATS_CREDS", Meaning: "the NATS credentials (.creds) of a single role, or of every part with VMOP_NATS_URL"},
	{Env: "VMOP_NATS_CA", Meaning: "the CA (PEM) that signed the NATS server's certificate"},
	{Env: "VMOP_NATS_NAME", Default: "vmop", Meaning: "the embedded NATS server's name, unique within a cluster"},
	{Env: "VMOP_NATS_CLUSTER_ADDR", Meaning: "where a node of a NATS cluster (role nats) listens for its peers' routes; unset: a single node"},
	{Env: "VMOP_NATS_ROUTES", Meaning: "the cluster's nodes, comma-separated nats-route://host:port (with VMOP_NATS_CLUSTER_ADDR)"},
	{Env: "VMOP_NATS_EXPORT", Meaning: "role nats-init copies each identity's credentials and the CA into <this>/<identity>/ where that directory exists"},
	{Env: "VMOP_BALANCE_BACKENDS", Meaning: "the gateways (host:port, comma-separated) that role balance forwards VMOP_ADDR's connections to"},
	{Env: "VMOP_VCENTER_URL", Meaning: "use this vCenter instead of the embedded vcsim"},
	{Env: "VMOP_VCENTER_USER", Default: "admin", Meaning: "vCenter's user (also guards the embedded vcsim)"},
	{Env: "VMOP_VCENTER_PASSWORD", NoFlag: true, Meaning: "vCenter's password (required with VMOP_VCENTER_URL; the embedded vcsim's is vmop-secret unless set)"},
	{Env: "VMOP_VCENTER_PASSWORD_FILE", Meaning: "a file holding vCenter's password, instead of VMOP_VCENTER_PASSWORD"},
	{Env: "VMOP_VCENTER_CA_FILE", Meaning: "PEM file of the CAs that sign VMOP_VCENTER_URL's certificate (default: the system's)"},
	{Env: "VMOP_VCENTER_THUMBPRINT", Meaning: "or trust the vCenter certificate whose SHA-256 (or SHA-1) thumbprint this is"},
	{Env: "VMOP_VCENTER_INSECURE", Default: "false", Meaning: "true skips verifying vCenter's certificate"},
	{Env: "VMOP_TOKENS_FILE", Meaning: "the callers and their token hashes (default: $VMOP_DATA/tokens.yaml)"},
	{Env: "VMOP_MAX_WATCHES_PER_USER", Default: "100", Meaning: "how many watches one user may have open; more are 429"},
	{Env: "VMOP_PRIVILEGED_USERS", Meaning: "comma-separated user names with privileged rights"},
	{Env: "VMOP_TRYSOFT_TIMEOUT", Default: "5m", Meaning: "how long a TrySoft power-off, suspend or restart waits for the guest before acting hard"},
	{Env: "VMOP_GUEST_POLL", Default: "10s", Meaning: "how often network reads the guests of all VMs again"},
	{Env: "VMOP_STREAM_REPLICAS", Default: "1", Meaning: "replicas of the streams and buckets: 1, or 3 on a three-node NATS cluster; never lowered"},
	{Env: "VMOP_METRICS_ADDR", Meaning: "where the services' /metrics and /healthz are served, plain HTTP (the API serves its own /metrics); unset: none"},
	{Env: "VMOP_LOG_FORMAT", Default: "text", Meaning: "text or json"},
	{Env: "VMOP_LOG_LEVEL", Default: "info", Meaning: "debug, info, warn or error"},
}

// otherVariables are read from the environment alone, by Go and OpenTelemetry.
const otherVariables = `  GOGC                  Go's garbage-collector target (vmop's default: 400)
  OTEL_TRACES_EXPORTER  none (default), console or otlp, with the standard OTEL_EXPORTER_OTLP_* variables
`

// flagName is the flag of a variable: VMOP_NATS_URL is --nats-url.
func flagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "VMOP_")), "_", "-")
}

// lookupSetting is the setting of a variable; asking for one not in the table is a bug.
func lookupSetting(env string) setting {
	for _, s := range settings {
		if s.Env == env {
			return s
		}
	}
	panic(fmt.Sprintf("%s is not in the settings table", env))
}

// withDefaults reads a setting from getenv, else its default from the table.
func withDefaults(getenv func(string) string) func(string) string {
	return func(env string) string {
		s := lookupSetting(env)
		if v := getenv(env); v != "" {
			return v
		}
		return s.Default
	}
}
