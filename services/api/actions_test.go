package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// observePower publishes the power service's slice: the VM is observed in state.
func observePower(t *testing.T, js jetstream.JetStream, name, uid string, state model.PowerState) {
	t.Helper()
	st, err := json.Marshal(map[string]any{"powerState": state})
	if err != nil {
		t.Fatal(err)
	}
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: name}
	if _, err := events.PublishStatus(context.Background(), js, ref, events.Slice{
		Service: model.ServicePower, UID: uid, Generation: 1, Status: st,
	}); err != nil {
		t.Fatal(err)
	}
}

// The start, stop and restart sub-resources change the desired state as a PATCH would,
// answer with the updated object, and refuse what makes no sense with Kubernetes
// Statuses, storing nothing then.
func TestVirtualMachineActions(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	admissionInventory(t, g)
	body := createMinimalVM(t, g)
	uid := field(decode(t, body), "metadata", "uid").(string)
	observe := func(state model.PowerState) {
		t.Helper()
		observePower(t, js, "my-vm", uid, state)
		g.eventually("observed "+string(state), func() bool {
			_, body := g.do("GET", vms+"/my-vm", adminToken, nil)
			return field(decode(t, body), "status", "powerState") == string(state)
		})
	}
	observe(model.PowerStateOn)
	vm := vms + "/my-vm"

	// act runs an action and checks the answer's code and, for failures, the Status.
	act := func(method, action, token string, body any, wantCode int, wantInMessage string) map[string]any {
		t.Helper()
		before := specCount(t, js)
		code, resp := g.do(method, vm+"/"+action, token, body)
		if code != wantCode {
			t.Fatalf("%s %s: %d %s, want %d", method, action, code, resp, wantCode)
		}
		obj := decode(t, resp)
		if wantCode != http.StatusOK {
			if obj["kind"] != "Status" || !strings.Contains(message(t, resp), wantInMessage) {
				t.Errorf("%s %s: %s, want a Status saying %q", method, action, resp, wantInMessage)
			}
			if after := specCount(t, js); after != before {
				t.Errorf("%s %s failed but SPECS grew from %d to %d", method, action, before, after)
			}
		}
		return obj
	}
	spec := func(obj map[string]any, f string) any { return field(obj, "spec", f) }

	t.Run("actions are served in v1alpha5 only", func(t *testing.T) {
		before := specCount(t, js)
		if code, resp := g.do("PUT", vmsV1alpha4+"/my-vm/stop", adminToken, nil); code != http.StatusNotFound {
			t.Errorf("PUT v1alpha4 stop: %d %s, want 404", code, resp)
		}
		if after := specCount(t, js); after != before {
			t.Errorf("a v1alpha4 action changed SPECS from %d to %d records", before, after)
		}
	})
	t.Run("start of a running VM conflicts", func(t *testing.T) {
		act("PUT", "start", userToken, nil, http.StatusConflict, "already desired PoweredOn")
	})
	t.Run("restart makes nextRestartTime the current time", func(t *testing.T) {
		before := time.Now().UTC()
		obj := act("PUT", "restart", userToken, nil, http.StatusOK, "")
		at, err := time.Parse(time.RFC3339Nano, spec(obj, "nextRestartTime").(string))
		if err != nil || at.Before(before.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
			t.Errorf("nextRestartTime = %v (%v), want about now", spec(obj, "nextRestartTime"), err)
		}
		if spec(obj, "restartMode") != "TrySoft" {
			t.Errorf("restartMode = %v, want TrySoft kept", spec(obj, "restartMode"))
		}
		if rv := field(obj, "metadata", "resourceVersion"); rv == nil {
			t.Errorf("answer is not the stored object: %v", obj)
		}
	})
	t.Run("a dry-run forced restart changes nothing", func(t *testing.T) {
		_, stored := g.do("GET", vm, adminToken, nil)
		before := specCount(t, js)
		obj := act("POST", "restart?dryRun=All", userToken, `{"gracePeriodSeconds":0,"force":true}`, http.StatusOK, "")
		if spec(obj, "restartMode") != "Hard" || spec(obj, "nextRestartTime") == spec(decode(t, stored), "nextRestartTime") {
			t.Errorf("dry run answered %v, want the restarted object", obj["spec"])
		}
		if after := specCount(t, js); after != before {
			t.Errorf("dry run stored: SPECS %d → %d", before, after)
		}
		obj = act("PUT", "restart", userToken, `{"apiVersion":"subresources.kubevirt.io/v1","kind":"RestartOptions","dryRun":["All"],"gracePeriodSeconds":0}`, http.StatusOK, "")
		if after := specCount(t, js); after != before || spec(obj, "restartMode") != "Hard" {
			t.Errorf("dry run in the body: SPECS %d → %d, restartMode %v", before, after, spec(obj, "restartMode"))
		}
	})
	t.Run("a forced restart with grace period 0 is a reset", func(t *testing.T) {
		obj := act("PUT", "restart", userToken, `{"gracePeriodSeconds":0}`, http.StatusOK, "")
		if spec(obj, "restartMode") != "Hard" {
			t.Errorf("restartMode = %v, want Hard", spec(obj, "restartMode"))
		}
	})
	t.Run("a negative grace period is invalid with its field", func(t *testing.T) {
		obj := act("PUT", "restart", userToken, `{"gracePeriodSeconds":-1}`, http.StatusUnprocessableEntity, "gracePeriodSeconds: Invalid value")
		if causes, _ := field(obj, "details", "causes").([]any); len(causes) != 1 || field(causes[0].(map[string]any), "field") != "gracePeriodSeconds" {
			t.Errorf("causes = %v", field(obj, "details", "causes"))
		}
	})
	t.Run("stop with grace period 0 powers off hard", func(t *testing.T) {
		obj := act("PUT", "stop", userToken, `{"gracePeriod":0}`, http.StatusOK, "")
		if spec(obj, "powerState") != "PoweredOff" || spec(obj, "powerOffMode") != "Hard" {
			t.Errorf("spec = %v, want PoweredOff, Hard", obj["spec"])
		}
		act("PUT", "stop", userToken, nil, http.StatusConflict, "already desired PoweredOff")
	})
	t.Run("restart of a VM desired off conflicts", func(t *testing.T) {
		act("PUT", "restart", userToken, nil, http.StatusConflict, "only a VM desired PoweredOn can be restarted")
	})
	t.Run("restart of a VM observed off is invalid (PWR-10)", func(t *testing.T) {
		observe(model.PowerStateOff)
		obj := act("POST", "start", userToken, `{}`, http.StatusOK, "")
		if spec(obj, "powerState") != "PoweredOn" {
			t.Errorf("start: powerState = %v", spec(obj, "powerState"))
		}
		obj = act("PUT", "restart", userToken, nil, http.StatusUnprocessableEntity, "spec.nextRestartTime: Invalid value")
		if causes, _ := field(obj, "details", "causes").([]any); len(causes) != 1 || field(causes[0].(map[string]any), "field") != "spec.nextRestartTime" {
			t.Errorf("causes = %v", field(obj, "details", "causes"))
		}
	})
	t.Run("start paused is not supported", func(t *testing.T) {
		act("PUT", "stop", userToken, nil, http.StatusOK, "")
		act("PUT", "start", userToken, `{"paused":true}`, http.StatusUnprocessableEntity, "paused: Unsupported value")
	})
	t.Run("malformed options are a bad request", func(t *testing.T) {
		act("PUT", "start", userToken, `{"paused":`, http.StatusBadRequest, "not valid start options")
	})
	t.Run("GET is not an action", func(t *testing.T) {
		act("GET", "start", userToken, nil, http.StatusMethodNotAllowed, "")
	})
	t.Run("unknown VM, unknown action, other namespace", func(t *testing.T) {
		if code, body := g.do("PUT", vms+"/no-such-vm/start", userToken, nil); code != http.StatusNotFound {
			t.Errorf("unknown VM: %d %s", code, body)
		}
		if code, body := g.do("PUT", vm+"/pause", userToken, nil); code != http.StatusNotFound {
			t.Errorf("unknown action: %d %s", code, body)
		}
		other := strings.Replace(vm, "my-namespace", "kube-system", 1)
		if code, body := g.do("PUT", other+"/start", userToken, nil); code != http.StatusForbidden {
			t.Errorf("other namespace: %d %s", code, body)
		}
		if code, body := g.do("PUT", "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachineclasses/my-vm-class/start", adminToken, nil); code != http.StatusNotFound {
			t.Errorf("action on a class: %d %s", code, body)
		}
	})
	t.Run("an action on a VM being deleted conflicts", func(t *testing.T) {
		if code, body := g.do("DELETE", vm, userToken, nil); code != http.StatusOK {
			t.Fatalf("delete: %d %s", code, body)
		}
		act("PUT", "start", userToken, nil, http.StatusConflict, "being deleted")
	})
}

// Discovery lists the actions as sub-resources, as Kubernetes lists pods/eviction.
func TestDiscoveryListsActions(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	code, body := g.do("GET", "/apis/vmoperator.vmware.com/v1alpha5", adminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("discovery: %d %s", code, body)
	}
	var list struct {
		Resources []struct {
			Name  string   `json:"name"`
			Verbs []string `json:"verbs"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"virtualmachines/start", "virtualmachines/stop", "virtualmachines/restart"} {
		i := slices.IndexFunc(list.Resources, func(r struct {
			Name  string   `json:"name"`
			Verbs []string `json:"verbs"`
		}) bool {
			return r.Name == want
		})
		if i < 0 || !slices.Contains(list.Resources[i].Verbs, "update") {
			t.Errorf("discovery lacks %s with verb update:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), "virtualmachineclasses/start") {
		t.Errorf("discovery lists actions on classes")
	}
}

// The Status column of `kubectl get vm` (server-side Table) follows the VM's life.
func TestVirtualMachineStatusColumn(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	admissionInventory(t, g)
	body := createMinimalVM(t, g)
	uid := field(decode(t, body), "metadata", "uid").(string)
	status := func() string {
		t.Helper()
		code, body := g.do("GET", vms, userToken, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		var table struct {
			ColumnDefinitions []struct{ Name string }
			Rows              []struct{ Cells []any }
		}
		if err := json.Unmarshal(body, &table); code != http.StatusOK || err != nil || len(table.Rows) != 1 {
			t.Fatalf("table: %d %s (%v)", code, body, err)
		}
		i := slices.IndexFunc(table.ColumnDefinitions, func(c struct{ Name string }) bool { return c.Name == "Status" })
		if i < 0 {
			t.Fatalf("no Status column: %s", body)
		}
		s, _ := table.Rows[0].Cells[i].(string)
		return s
	}
	if got := status(); got != "Creating" {
		t.Errorf("new VM: %q, want Creating", got)
	}
	observePower(t, js, "my-vm", uid, model.PowerStateOn)
	g.eventually("Running", func() bool { return status() == "Running" })
	if code, body := g.do("PUT", vms+"/my-vm/restart", userToken, nil); code != http.StatusOK {
		t.Fatalf("restart: %d %s", code, body)
	}
	if got := status(); got != "Restarting" {
		t.Errorf("after restart: %q, want Restarting", got)
	}
	if code, body := g.do("PUT", vms+"/my-vm/stop", userToken, nil); code != http.StatusOK {
		t.Fatalf("stop: %d %s", code, body)
	}
	if got := status(); got != "Stopping" {
		t.Errorf("after stop: %q, want Stopping", got)
	}
}

// Concurrent actions on one VM all succeed: one that loses the compare-and-swap is
// applied again to the new state, as the apiserver retries a patch.
func TestConcurrentActionsAreRetried(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	admissionInventory(t, g)
	body := createMinimalVM(t, g)
	observePower(t, js, "my-vm", field(decode(t, body), "metadata", "uid").(string), model.PowerStateOn)
	g.eventually("observed PoweredOn", func() bool {
		_, body := g.do("GET", vms+"/my-vm", adminToken, nil)
		return field(decode(t, body), "status", "powerState") == "PoweredOn"
	})
	before := specCount(t, js)
	const n = 4 // fewer than the attempts: every round stores at least one
	codes := make(chan int, n)
	for range n {
		go func() {
			code, _, _ := g.doHeader("PUT", vms+"/my-vm/restart", userToken, nil)
			codes <- code
		}()
	}
	for range n {
		if code := <-codes; code != http.StatusOK {
			t.Errorf("a concurrent restart answered %d", code)
		}
	}
	if after := specCount(t, js); after != before+n {
		t.Errorf("SPECS grew by %d, want %d restarts stored", after-before, n)
	}
}
