package vcenter_test

import (
	"sync"
	"testing"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// A session vCenter ended (as a restart or an expiry does) is replaced transparently, once
// however many calls find it gone together.
func TestReloginSOAP(t *testing.T) {
	sim := simulate(t)
	ctx, c := t.Context(), sim.c
	admin, err := vcenter.Connect(ctx, sim.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer vcenter.Logout(ctx, admin)
	session, err := c.SessionManager.UserSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.SessionManager.TerminateSession(ctx, []string{session.Key}); err != nil {
		t.Fatal(err)
	}
	// The soap client alone, without Connect's handling, finds the session gone.
	if _, err := methods.GetCurrentTime(ctx, c.Client.Client); !fault.Is(err, &types.NotAuthenticated{}) {
		t.Fatalf("a call with the terminated session: %v, want NotAuthenticated", err)
	}

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var vm mo.VirtualMachine
			if err := sim.vm.Properties(ctx, sim.vm.Reference(), []string{"runtime.powerState"}, &vm); err != nil {
				t.Errorf("read a VM after the session was terminated: %v", err)
			}
		})
	}
	wg.Wait()

	var sm mo.SessionManager
	if err := admin.RetrieveOne(ctx, *admin.ServiceContent.SessionManager, []string{"sessionList"}, &sm); err != nil {
		t.Fatal(err)
	}
	if n := len(sm.SessionList); n != 2 {
		t.Errorf("%d sessions after the calls logged in again, want 2 (admin's and one new)", n)
	}
}

// A vAPI session vCenter ended is replaced for a call with a body (sent again) as for a call
// without one (govmomi gives those an empty reader net/http cannot rewind).
func TestReloginREST(t *testing.T) {
	sim := simulate(t)
	ctx := t.Context()
	rc, err := vcenter.LoginREST(ctx, sim.c, sim.endpoint.URL.User)
	if err != nil {
		t.Fatal(err)
	}
	defer vcenter.Logout(ctx, rc)
	tm := tags.NewManager(rc)
	if _, err := tm.ListCategories(ctx); err != nil {
		t.Fatal(err)
	}
	// Another client ends the session server-side.
	endSession := func() string {
		t.Helper()
		ended := rc.SessionID()
		killer := rest.NewClient(sim.c.Client)
		killer.SessionID(ended)
		if err := killer.Logout(ctx); err != nil {
			t.Fatal(err)
		}
		if s, err := killer.Session(ctx); err != nil || s != nil {
			t.Fatalf("the ended session still answers: %v %v", s, err)
		}
		return ended
	}

	ended := endSession()
	if _, err := tm.CreateCategory(ctx, &tags.Category{Name: "after-relogin", Cardinality: "SINGLE"}); err != nil {
		t.Fatalf("create a category after the session ended: %v", err)
	}
	if rc.SessionID() == ended {
		t.Error("the client still holds the ended session")
	}

	ended = endSession()
	categories, err := tm.GetCategories(ctx)
	if err != nil || len(categories) != 1 || categories[0].Name != "after-relogin" {
		t.Errorf("categories after the session ended: %v %v, want the one created once", categories, err)
	}
	if rc.SessionID() == ended {
		t.Error("the client still holds the ended session")
	}
}
