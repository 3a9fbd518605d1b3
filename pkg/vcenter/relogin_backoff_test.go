package vcenter_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// callers is how many calls find the session gone together, as a service's workers,
// resyncs and keepalive do.
const callers = 16

// together makes call from callers goroutines at once and returns their errors.
func together(call func() error) []error {
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = call() })
	}
	wg.Wait()
	return errs
}

// backoff steps a session whose logins vCenter refuses through its re-login backoff: at
// each step, callers calls at once cost vCenter one login attempt when the wait since the
// last failure is over, none a moment before. check judges each call's error.
func backoff(t *testing.T, sim simulated, clock *fakeClock, call func() error, check func(error)) {
	t.Helper()
	expect := func(step string, attempts int64) {
		t.Helper()
		before := sim.logins.tried.Load()
		for _, err := range together(call) {
			check(err)
		}
		if got := sim.logins.tried.Load() - before; got != attempts {
			t.Fatalf("%s: %d calls made %d login attempts, want %d", step, callers, got, attempts)
		}
	}
	expect("the first failure", 1)
	for _, wait := range []time.Duration{1, 2, 4, 8, 16, 32, 60, 60} {
		wait *= time.Second
		clock.Advance(wait - time.Millisecond)
		expect("just before the wait of "+wait.String()+" is over", 0)
		clock.Advance(time.Millisecond)
		expect("once the wait of "+wait.String()+" is over", 1)
	}
}

// recovers checks, once vCenter accepts logins again, that the end of the wait lets one
// login make the calls succeed, and that the success reset the wait: after the session
// ends again, refused logins are held back for 1s.
func recovers(t *testing.T, sim simulated, clock *fakeClock, call func() error, endSession func()) {
	t.Helper()
	before := sim.logins.tried.Load()
	clock.Advance(time.Minute)
	for _, err := range together(call) {
		if err != nil {
			t.Fatalf("a call once logins are accepted and the wait is over: %v", err)
		}
	}
	if got := sim.logins.tried.Load() - before; got != 1 {
		t.Fatalf("%d login attempts until calls succeed again, want 1", got)
	}

	endSession()
	sim.logins.refuse.Store(true)
	before = sim.logins.tried.Load()
	together(call)
	clock.Advance(time.Second)
	together(call)
	if got := sim.logins.tried.Load() - before; got != 2 {
		t.Fatalf("%d login attempts in the first second after a success, want 2", got)
	}
}

// refused is a check that a call failed because vCenter refused the login, without
// showing the password.
func refused(t *testing.T, want func(error) bool) func(error) {
	return func(err error) {
		t.Helper()
		if err == nil || !want(err) {
			t.Fatalf("a call while logins are refused: %v", err)
		}
		if strings.Contains(err.Error(), simPassword) {
			t.Fatalf("error %q shows the password", err)
		}
	}
}

// A rotated password must not turn every call into a failed login (vCenter would lock
// the account): a failed re-login is remembered for a wait doubling from 1s to 1m, shared
// by all calls, and forgotten after a login succeeds.
func TestReloginBackoffSOAP(t *testing.T) {
	sim := simulate(t)
	ctx := t.Context()
	clock := &fakeClock{now: time.Now()}
	c, err := vcenter.ConnectAt(ctx, sim.endpoint, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer vcenter.Logout(ctx, c)
	vm := object.NewVirtualMachine(c.Client, sim.vm.Reference())
	read := func() error {
		var o mo.VirtualMachine
		return vm.Properties(ctx, vm.Reference(), []string{"runtime.powerState"}, &o)
	}
	endSession := func() {
		t.Helper()
		s, err := c.SessionManager.UserSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.c.SessionManager.TerminateSession(ctx, []string{s.Key}); err != nil {
			t.Fatal(err)
		}
	}
	invalidLogin := refused(t, func(err error) bool { return fault.Is(err, &types.InvalidLogin{}) })

	endSession()
	sim.logins.refuse.Store(true)
	backoff(t, sim, clock, read, invalidLogin)

	// Logins are accepted again, but the last failure still holds them back for 1m.
	sim.logins.refuse.Store(false)
	before := sim.logins.tried.Load()
	for _, err := range together(read) {
		invalidLogin(err)
	}
	if got := sim.logins.tried.Load() - before; got != 0 {
		t.Fatalf("%d login attempts while the last failure holds them back, want 0", got)
	}
	recovers(t, sim, clock, read, endSession)
}

func TestReloginBackoffREST(t *testing.T) {
	sim := simulate(t)
	ctx := t.Context()
	clock := &fakeClock{now: time.Now()}
	rc, err := vcenter.LoginRESTAt(ctx, sim.c, sim.endpoint.URL.User, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer vcenter.Logout(ctx, rc)
	tm := tags.NewManager(rc)
	list := func() error {
		_, err := tm.ListCategories(ctx)
		return err
	}
	endSession := func() {
		t.Helper()
		killer := rest.NewClient(sim.c.Client)
		killer.SessionID(rc.SessionID())
		if err := killer.Logout(ctx); err != nil {
			t.Fatal(err)
		}
	}
	unauthorized := refused(t, func(err error) bool { return strings.Contains(err.Error(), "401") })

	endSession()
	sim.logins.refuse.Store(true)
	backoff(t, sim, clock, list, unauthorized)

	sim.logins.refuse.Store(false)
	recovers(t, sim, clock, list, endSession)
}
