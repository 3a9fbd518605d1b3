package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
	"github.com/vmop/vmop/services/api"
	"github.com/vmop/vmop/services/crypto"
	"github.com/vmop/vmop/services/network"
	"github.com/vmop/vmop/services/placement"
	"github.com/vmop/vmop/services/power"
	"github.com/vmop/vmop/services/storage"
)

type jsFunc func(ctx context.Context, js jetstream.JetStream) error

// serviceFunc runs one VirtualMachine service against NATS and the vCenter vc, with the
// stack's configuration c.
type serviceFunc func(ctx context.Context, js jetstream.JetStream, vc vcenter.Endpoint, c config) error

// serviceRuns are the five VirtualMachine services by name.
var serviceRuns = map[string]serviceFunc{
	model.ServicePlacement: func(ctx context.Context, js jetstream.JetStream, vc vcenter.Endpoint, _ config) error {
		return placement.Run(ctx, placement.Config{JetStream: js, VCenter: vc})
	},
	model.ServicePower: func(ctx context.Context, js jetstream.JetStream, vc vcenter.Endpoint, c config) error {
		return power.Run(ctx, power.Config{JetStream: js, VCenter: vc, TrySoftTimeout: c.TrySoftTimeout})
	},
	model.ServiceStorage: func(ctx context.Context, js jetstream.JetStream, vc vcenter.Endpoint, _ config) error {
		return storage.Run(ctx, storage.Config{JetStream: js, VCenter: vc})
	},
	model.ServiceNetwork: func(ctx context.Context, js jetstream.JetStream, vc vcenter.Endpoint, c config) error {
		return network.Run(ctx, network.Config{JetStream: js, VCenter: vc, GuestPoll: c.GuestPoll})
	},
	model.ServiceCrypto: func(ctx context.Context, js jetstream.JetStream, vc vcenter.Endpoint, _ config) error {
		return crypto.Run(ctx, crypto.Config{JetStream: js, VCenter: vc})
	},
}

// withVCenter binds a service to the configured vCenter: VMOP_VCENTER_URL (with
// VMOP_VCENTER_USER and _PASSWORD unless the URL carries credentials), or in "all" the
// embedded vcsim.
func withVCenter(name string, f serviceFunc, c config) jsFunc {
	return func(ctx context.Context, js jetstream.JetStream) error {
		e, err := vcenterEndpoint(c)
		if err != nil {
			return err
		}
		e.Client = name
		return explainTrust(f(ctx, js, e, c))
	}
}

// roleFor returns what the binary runs for a role; "all" is every part in this process.
func roleFor(name string) (func(context.Context, config) error, bool) {
	switch name {
	case "all":
		return runAll, true
	case "api":
		return func(ctx context.Context, c config) error { return withNATS(ctx, c, name, runAPIWith(c)) }, true
	case "nats":
		return runNATS, true
	case "nats-init":
		return runNATSInit, true
	case "balance":
		return runBalance, true
	case "vcsim":
		return runVCSim, true
	}
	f, ok := serviceRuns[name]
	if !ok {
		return nil, false
	}
	return func(ctx context.Context, c config) error {
		return withNATS(ctx, c, name, withMetrics(c, withVCenter(name, f, c)))
	}, true
}

// withMetrics serves VMOP_METRICS_ADDR while f runs.
func withMetrics(c config, f jsFunc) jsFunc {
	return func(ctx context.Context, js jetstream.JetStream) error {
		stop, err := startMetrics(c.MetricsAddr, []*nats.Conn{js.Conn()})
		if err != nil {
			return err
		}
		defer stop()
		return f(ctx, js)
	}
}

// withNATS connects to VMOP_NATS_URL (roles other than "all" need an outside NATS) with
// VMOP_NATS_CREDS, trusting VMOP_NATS_CA.
func withNATS(ctx context.Context, c config, name string, f jsFunc) error {
	if c.NATSURL == "" {
		return errors.New("VMOP_NATS_URL is required for a single role")
	}
	nc, js, err := connect(c.NATSURL, nil, name, natsLogin{Creds: c.NATSCreds, CA: c.NATSCA})
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := events.Setup(ctx, js, events.WithReplicas(c.StreamReplicas)); err != nil {
		return fmt.Errorf("set up streams (VMOP_STREAM_REPLICAS=%d): %w", c.StreamReplicas, err)
	}
	return f(ctx, js)
}

// runAll is `make run`: embedded NATS and vcsim unless outside ones are configured, the
// seeded inventory, every service and the API, stopping all when one fails.
func runAll(ctx context.Context, c config) error {
	var ns *embeddedNATS
	if c.NATSURL == "" {
		var err error
		asPart(ctx, "nats", func(ctx context.Context) { ns, err = startNATS(ctx, c) })
		if err != nil {
			return err
		}
		defer ns.Shutdown()
		logNATS(c)
	}
	if c.VCenterURL == "" {
		var sim *inventory.Sim
		var err error
		asPart(ctx, "vcsim", func(ctx context.Context) { sim, err = startVCSim(ctx, c) })
		if err != nil {
			return err
		}
		defer sim.Close()
		// Every part trusts it as it would an outside vCenter: by its certificate.
		c.VCenterURL, c.VCenterTLS = sim.URL.String(), vcenterTLS{CAFile: vcsimCertFile(c)}
		slog.Info("embedded vcsim", "url", (&url.URL{Scheme: sim.URL.Scheme, Host: sim.URL.Host, Path: sim.URL.Path}).String(),
			"ca", vcsimCertFile(c))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	parts := map[string]jsFunc{"api": runAPIWith(c)}
	for name, f := range serviceRuns {
		parts[name] = withVCenter(name, f, c)
	}
	conns, closeConns, err := connectParts(c, ns, slices.Collect(maps.Keys(parts)))
	if err != nil {
		return err
	}
	defer closeConns()
	var ncs []*nats.Conn
	for _, js := range conns {
		ncs = append(ncs, js.Conn())
	}
	stopMetrics, err := startMetrics(c.MetricsAddr, ncs)
	if err != nil {
		return err
	}
	defer stopMetrics()
	errc := make(chan error, len(parts))
	for name, p := range parts {
		go asPart(ctx, name, func(ctx context.Context) { errc <- p(ctx, conns[name]) })
	}
	var first error
	for range parts {
		if err := <-errc; err != nil && first == nil {
			first = err
			cancel(err)
		}
	}
	return first
}

// asPart runs f with the profiler label part=name, which the goroutines it starts
// inherit: a CPU profile of the process (a benchmark's -test.cpuprofile) then tells the
// parts apart (go tool pprof -tags).
func asPart(ctx context.Context, name string, f func(context.Context)) {
	pprof.Do(ctx, pprof.Labels("part", name), f)
}

// runAPIWith prepares the gateway: certificates, tokens, kubeconfig and the inventory
// objects read from vCenter (seeded there first when it is our own vcsim).
func runAPIWith(c config) jsFunc {
	return func(ctx context.Context, js jetstream.JetStream) error {
		host, _, err := net.SplitHostPort(c.Addr)
		if err != nil {
			return fmt.Errorf("VMOP_ADDR %q: %w", c.Addr, err)
		}
		certs, err := api.EnsureCertificates(filepath.Join(c.Data, "pki"), []string{host, "localhost", "127.0.0.1"})
		if err != nil {
			return fmt.Errorf("certificates: %w", err)
		}
		kubeconfig := filepath.Join(c.Data, "kubeconfig")
		if err := ensureCredentials(c.TokensFile, kubeconfig, clientAddr(c.Addr), certs.CAFile); err != nil {
			return err
		}
		seed, err := inventoryObjects(ctx, c)
		if err != nil {
			return err
		}
		slog.Info("vmop API", "url", "https://"+c.Addr, "kubeconfig", kubeconfig,
			"try", "KUBECONFIG="+kubeconfig+" kubectl api-resources")
		slog.Info("switch to the ordinary user with: kubectl config use-context user")
		slog.Info("web console", "url", "https://"+clientAddr(c.Addr)+"/", "ca", certs.CAFile,
			"token from", "kubectl --kubeconfig "+kubeconfig+" config view --raw --minify -o jsonpath={.users[0].user.token}")
		return api.Run(ctx, api.Config{
			Addr: c.Addr, DataDir: filepath.Join(c.Data, "api"), Certs: certs, TokensPath: c.TokensFile,
			PrivilegedUsers: c.PrivilegedUsers, JetStream: js, Seed: seed, MaxWatchesPerUser: c.MaxWatchesPerUser,
			Namespaces: api.NamespaceSettings{DefaultNetwork: inventory.DefaultNetwork, Zones: zoneNames()},
		})
	}
}

// inventoryObjects returns the API objects describing the vCenter inventory; none when no
// vCenter is configured. Whoever runs vcsim seeds it (the "all" and "vcsim" roles), maybe
// at the same time as this starts, so a missing inventory is waited for.
func inventoryObjects(ctx context.Context, c config) ([]map[string]any, error) {
	if c.VCenterURL == "" {
		return nil, nil
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		objs, err := readInventory(ctx, c)
		var untrusted *vcenter.CertificateError
		if err == nil || errors.As(err, &untrusted) {
			return objs, err // waiting would not make the certificate trusted
		}
		slog.Info("waiting for the vCenter inventory", "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("read inventory: %w", err)
		case <-tick.C:
		}
	}
}

func readInventory(ctx context.Context, c config) ([]map[string]any, error) {
	client, login, err := connectVCenter(ctx, c)
	if err != nil {
		return nil, err
	}
	defer client.Logout(context.Background())
	return inventory.Objects(ctx, client, login)
}

// startVCSim starts vcsim on VMOP_VCSIM_ADDR, its certificate kept in $VMOP_DATA/vcsim,
// and seeds it with the inventory (idempotent).
func startVCSim(ctx context.Context, c config) (*inventory.Sim, error) {
	sim, err := inventory.StartSim(ctx, inventory.SimConfig{
		Listen: c.VCSimAddr, Username: c.VCenterUser, Password: c.VCenterPassword, CertDir: filepath.Dir(vcsimCertFile(c)),
	})
	if err != nil {
		return nil, fmt.Errorf("start vcsim: %w", err)
	}
	client, err := vcenter.Connect(ctx, sim.Endpoint())
	if err == nil {
		err = inventory.Seed(ctx, client, sim.URL.User)
		vcenter.Logout(ctx, client)
	}
	if err != nil {
		sim.Close()
		return nil, fmt.Errorf("seed vcsim: %w", err)
	}
	if err := exportVCSimCert(c); err != nil {
		sim.Close()
		return nil, err
	}
	return sim, nil
}

// exportVCSimCert copies vcsim's certificate into VMOP_VCSIM_EXPORT, when set, so the
// parts that trust it get that file and never the directory that also holds its key.
func exportVCSimCert(c config) error {
	if c.VCSimExport == "" {
		return nil
	}
	cert, err := os.ReadFile(vcsimCertFile(c))
	if err != nil {
		return fmt.Errorf("read vcsim certificate: %w", err)
	}
	to := filepath.Join(c.VCSimExport, inventory.SimCertFile)
	if err := os.WriteFile(to+".new", cert, 0o644); err != nil {
		return fmt.Errorf("export vcsim certificate: %w", err)
	}
	if err := os.Rename(to+".new", to); err != nil { // readers never see half a file
		return fmt.Errorf("export vcsim certificate: %w", err)
	}
	return nil
}

// vcsimCertFile is where vcsim's certificate is, for the parts that connect to it.
func vcsimCertFile(c config) string {
	return filepath.Join(c.Data, "vcsim", inventory.SimCertFile)
}

// connectVCenter logs in to VMOP_VCENTER_URL; the login is also what the vAPI (REST) side needs.
func connectVCenter(ctx context.Context, c config) (*govmomi.Client, *url.Userinfo, error) {
	e, err := vcenterEndpoint(c)
	if err != nil {
		return nil, nil, err
	}
	client, err := vcenter.Connect(ctx, e)
	if err != nil {
		return nil, nil, explainTrust(err)
	}
	return client, e.URL.User, nil
}

// vcenterEndpoint is VMOP_VCENTER_URL, with the configured credentials unless it carries
// its own, and the configured trust.
func vcenterEndpoint(c config) (vcenter.Endpoint, error) {
	if c.VCenterURL == "" {
		return vcenter.Endpoint{}, errors.New("VMOP_VCENTER_URL is required for a single role")
	}
	u, err := parseVCenterURL(c.VCenterURL)
	if err != nil {
		return vcenter.Endpoint{}, err
	}
	if _, ok := u.User.Password(); !ok {
		user := c.VCenterUser
		if u.User != nil {
			user = u.User.Username()
		}
		u.User = url.UserPassword(user, c.VCenterPassword)
	}
	t := c.VCenterTLS
	return vcenter.Endpoint{URL: u, CAFile: t.CAFile, Thumbprint: t.Thumbprint, Insecure: t.Insecure}, nil
}

// explainTrust names the settings that make an untrusted vCenter certificate trusted.
func explainTrust(err error) error {
	var untrusted *vcenter.CertificateError
	if !errors.As(err, &untrusted) {
		return err
	}
	return fmt.Errorf("%w: set VMOP_VCENTER_CA_FILE to a PEM file of its CA, or VMOP_VCENTER_THUMBPRINT to that thumbprint once checked against vCenter's own, or VMOP_VCENTER_INSECURE=true to skip verification", err)
}

// runNATS is the embedded NATS alone (compose's nats containers), secured as in "all";
// its /healthz (VMOP_METRICS_ADDR) answers once the streams are set up.
func runNATS(ctx context.Context, c config) error {
	ns, err := startNATS(ctx, c)
	if err != nil {
		return err
	}
	defer ns.Shutdown()
	logNATS(c)
	stop, err := startMetrics(c.MetricsAddr, nil)
	if err != nil {
		return err
	}
	defer stop()
	<-ctx.Done()
	return nil
}

// runVCSim is vcsim alone, seeded with the inventory; the other parts trust its
// certificate file (VMOP_VCENTER_CA_FILE). Its /healthz (VMOP_METRICS_ADDR) answers once
// the inventory is seeded.
func runVCSim(ctx context.Context, c config) error {
	sim, err := startVCSim(ctx, c)
	if err != nil {
		return err
	}
	defer sim.Close()
	stop, err := startMetrics(c.MetricsAddr, nil)
	if err != nil {
		return err
	}
	defer stop()
	slog.Info("vcsim ready", "addr", c.VCSimAddr, "ca", vcsimCertFile(c))
	<-ctx.Done()
	return nil
}

// clientAddr is where clients reach a listen address: a wildcard host means this machine.
func clientAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || (host != "" && host != "0.0.0.0" && host != "::") {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// zoneNames are the zones a topology.kubernetes.io/zone label may name (ANN-8).
func zoneNames() []string {
	names := make([]string, len(inventory.Zones))
	for i, z := range inventory.Zones {
		names[i] = z.Name
	}
	return names
}
