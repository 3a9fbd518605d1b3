package vcenter_test

import (
	"crypto/tls"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	_ "github.com/vmware/govmomi/vapi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// simulated is a vcsim vCenter with a client connected through vcenter.Connect and one
// of its (powered-on) VMs.
type simulated struct {
	endpoint vcenter.Endpoint // trusted by its certificate's thumbprint
	server   *simulator.Server
	logins   *logins // SOAP and vAPI alike
	c        *govmomi.Client
	vm       *object.VirtualMachine
}

// The service account vcsim accepts.
const (
	simUser     = "vmop-service"
	simPassword = "vcsim-password-1"
)

// logins is vcsim's check of a login: it counts them, and refuses them all while refuse is
// set, as vCenter does once the account's password was rotated.
type logins struct {
	tried  atomic.Int64
	refuse atomic.Bool
}

func (l *logins) valid(req *types.Login) bool {
	l.tried.Add(1)
	return !l.refuse.Load() && req.UserName == simUser && req.Password == simPassword
}

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func simulate(t *testing.T) simulated {
	t.Helper()
	m := simulator.VPX()
	t.Cleanup(m.Remove)
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	m.Service.RegisterEndpoints = true // the vAPI (REST) endpoints
	m.Service.TLS = new(tls.Config)    // net/http's self-signed test certificate
	// vcsim accepts any login unless it is given a user of its own.
	m.Service.Listen = &url.URL{User: url.UserPassword(simUser, simPassword)}
	l := new(logins)
	m.Map().SessionManager().ValidLogin = l.valid
	s := m.Service.NewServer()
	t.Cleanup(s.Close)
	endpoint := vcenter.Endpoint{URL: s.URL, Thumbprint: soap.ThumbprintSHA256(s.Certificate())}
	c, err := vcenter.Connect(t.Context(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	vms, err := find.NewFinder(c.Client, true).VirtualMachineList(t.Context(), "/...")
	if err != nil || len(vms) == 0 {
		t.Fatalf("simulator VMs: %v", err)
	}
	return simulated{endpoint: endpoint, server: s, logins: l, c: c, vm: vms[0]}
}
