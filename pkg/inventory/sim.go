package inventory

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"

	"github.com/vmop/vmop/pkg/vcenter"

	// vCenter endpoints beyond SOAP, mounted because RegisterEndpoints is set: vAPI (tags, content
	// library, sessions), key providers, namespaces and VM classes, PBM, CNS and the FCD catalog.
	_ "github.com/vmware/govmomi/cns/simulator"
	_ "github.com/vmware/govmomi/pbm/simulator"
	_ "github.com/vmware/govmomi/vapi/crypto/simulator"
	_ "github.com/vmware/govmomi/vapi/namespace/simulator"
	_ "github.com/vmware/govmomi/vapi/simulator"
	_ "github.com/vmware/govmomi/vslm/simulator"
)

// SimConfig configures the embedded vCenter.
type SimConfig struct {
	// Listen is the address to serve on, e.g. "127.0.0.1:8989"; "127.0.0.1:0" picks a free port.
	// Empty means "127.0.0.1:0".
	Listen string
	// Username and Password are the only credentials accepted; empty means any credentials are
	// accepted and the URL carries vcsim's default "user:pass".
	Username, Password string
	// CertDir, when set, keeps the serving certificate there (SimCertFile, with its key), so
	// that vcsim keeps its identity across restarts and other processes can verify it.
	CertDir string
}

// Sim is an embedded vcsim serving HTTPS, like vCenter. Its inventory is empty apart from vcsim's
// fixed service content: call Seed to build the topology.
type Sim struct {
	// URL is the SDK endpoint with credentials, e.g. https://user:pass@127.0.0.1:8989/sdk.
	URL *url.URL
	// Thumbprint is the SHA-256 thumbprint of the serving certificate.
	Thumbprint string
	// certFile is the serving certificate's file when SimConfig.CertDir keeps it.
	certFile string

	model     *simulator.Model
	server    *simulator.Server
	polls     *longPolls
	reaper    *collectorReaper
	intercept atomic.Pointer[Interceptor] // see Intercept
	cnsLocked sync.Once                   // lockCNSQueries
	closeOnce sync.Once
}

// StartSim starts an embedded vcsim on cfg.Listen.
func StartSim(ctx context.Context, cfg SimConfig) (*Sim, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	listen := cfg.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	user := simulator.DefaultLogin
	if cfg.Username != "" || cfg.Password != "" {
		user = url.UserPassword(cfg.Username, cfg.Password)
	}

	m := simulator.VPX()
	// Start empty: Seed builds our own datacenter, clusters, hosts, datastores and networks
	// through the API, as it would in any vCenter.
	m.Datacenter, m.Cluster, m.ClusterHost, m.Host = 0, 0, 0, 0
	m.Datastore, m.Portgroup, m.Machine, m.Autostart = 0, 0, 0, false
	if err := m.Create(); err != nil {
		m.Remove()
		return nil, fmt.Errorf("create vcsim model: %w", err)
	}

	polls := newLongPolls()
	sim := &Sim{model: m, polls: polls, reaper: &collectorReaper{Self: collectorReaperRef}}
	m.Service.RegisterEndpoints = true
	m.Service.Listen = &url.URL{Host: listen, User: user}
	cert, err := simCertificate(cfg.CertDir, simHosts(listen))
	if err != nil {
		m.Remove()
		return nil, err
	}
	sim.Thumbprint = soap.ThumbprintSHA256(cert.Leaf)
	if cfg.CertDir != "" {
		sim.certFile = filepath.Join(cfg.CertDir, SimCertFile)
	}
	m.Service.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	m.Map().Handler = sim.handle

	server, err := newServer(m)
	if err != nil {
		m.Remove()
		return nil, err
	}
	sim.URL, sim.server = server.URL, server
	return sim, nil
}

// newServer starts the HTTPS server; vcsim panics when the address cannot be bound (notes P17).
func newServer(m *simulator.Model) (s *simulator.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("start vcsim on %s: %v", m.Service.Listen.Host, r)
		}
	}()
	return m.Service.NewServer(), nil
}

// Endpoint is the simulator for vcenter.Connect, trusted by its certificate's file when
// kept, else by its thumbprint (which govmomi checks only after a verified handshake has
// failed, a failure vcsim logs).
func (s *Sim) Endpoint() vcenter.Endpoint {
	if s.certFile != "" {
		return vcenter.Endpoint{URL: s.URL, CAFile: s.certFile}
	}
	return vcenter.Endpoint{URL: s.URL, Thumbprint: s.Thumbprint}
}

// Client logs in to the simulator with a new govmomi client.
func (s *Sim) Client(ctx context.Context) (*govmomi.Client, error) {
	return vcenter.Connect(ctx, s.Endpoint())
}

// Close stops the server and deletes the simulator's datastore directories. In-flight
// WaitForUpdatesEx calls are cancelled first: vcsim ignores client disconnects and the HTTP server
// would otherwise wait for them forever (notes P19). Close is safe to call more than once.
func (s *Sim) Close() {
	s.closeOnce.Do(func() {
		s.polls.close()
		done := make(chan struct{})
		go func() {
			s.server.Close()
			close(done)
		}()
		// A poll that slipped past close() (dispatched, but its cancel func not yet stored) is
		// cancelled by the next sweep.
		sweep := time.NewTicker(20 * time.Millisecond)
		defer sweep.Stop()
		for stop := false; !stop; {
			select {
			case <-done:
				stop = true
			case <-sweep.C:
				s.polls.cancelAll()
			}
		}
		s.model.Remove()
	})
}
