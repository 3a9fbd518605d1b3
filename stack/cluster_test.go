package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
)

// vcenterCalls counts the calls that change a VM, as vcsim receives them: a create
// (CreateVM_Task, CloneVM_Task, or ImportVApp for a library item's deployment) by the VM's
// name, the others by the VM they act on.
type vcenterCalls struct {
	mu sync.Mutex
	n  map[string]int // "<method> <vm name or moref>" → calls
}

func (c *vcenterCalls) intercept(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
	key := ""
	switch body := m.Body.(type) {
	case *types.CreateVM_Task:
		key = "create " + body.Config.Name
	case *types.ImportVApp: // a library item's deployment
		if spec, ok := body.Spec.(*types.VirtualMachineImportSpec); ok {
			key = "create " + spec.ConfigSpec.Name
		}
	case *types.CloneVM_Task:
		key = "create " + body.Name
	default:
		switch m.Name {
		case "PowerOnVM_Task", "ResetVM_Task", "RebootGuest", "PowerOffVM_Task", "Destroy_Task":
			key = m.Name + " " + m.This.Value
		}
	}
	if key != "" {
		c.mu.Lock()
		c.n[key]++
		c.mu.Unlock()
	}
	return nil, nil
}

// count returns the calls of method, by target.
func (c *vcenterCalls) count(method string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, n := range c.n {
		if target, ok := strings.CutPrefix(k, method+" "); ok {
			out[target] = n
		}
	}
	return out
}

// Issue #17's acceptance: a 3-node NATS cluster (R3) and two replicas of every part (two
// `vmop all` processes, each with its own gateway, all services and its own read model,
// one set of credentials); during 100 creates one NATS node is stopped and one replica
// SIGKILLed. Exactly 100 VMs are created, each once, all power on once, nothing is lost;
// and a restart asked while both power replicas run resets the VM once.
func TestReplicatedStackSurvivesNodeAndReplicaLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS cluster and two stacks")
	}
	ctx := t.Context()
	cluster := eventstest.StartCluster(t, 3)
	admin, _ := cluster.Connect(t)
	if err := events.Setup(ctx, admin, events.WithReplicas(3)); err != nil {
		t.Fatal(err)
	}

	simDir := t.TempDir()
	sim, err := startVCSim(ctx, config{VCSimAddr: "127.0.0.1:0", Data: simDir, VCenterUser: "admin", VCenterPassword: "vmop-secret"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	calls := &vcenterCalls{n: map[string]int{}}
	sim.Intercept(calls.intercept)
	vmsBefore := simVMs(t, sim)

	env := func(data, addr string) []string {
		return []string{
			"VMOP_DATA=" + data,
			"VMOP_ADDR=" + addr,
			"VMOP_NATS_URL=" + cluster.URL(),
			"VMOP_STREAM_REPLICAS=3",
			"VMOP_VCENTER_URL=" + sim.URL.Scheme + "://" + sim.URL.Host + sim.URL.Path,
			"VMOP_VCENTER_USER=admin",
			"VMOP_VCENTER_PASSWORD=vmop-secret",
			"VMOP_VCENTER_CA_FILE=" + filepath.Join(simDir, "vcsim", inventory.SimCertFile),
		}
	}
	dataA, dataB, addrB := t.TempDir(), t.TempDir(), eventstest.FreeAddr(t)
	a := startVmopProcess(t, dataA, env(dataA, eventstest.FreeAddr(t)))
	// The second gateway serves the same API: the same CA, serving certificate and tokens.
	copyFiles(t, dataA, dataB, "pki", "tokens.yaml", "kubeconfig")
	b := startVmopProcess(t, dataB, env(dataB, addrB))
	// The copied kubeconfig names the first gateway, which startVmopProcess found serving:
	// the second is asked at its own address until it serves too.
	b.api.server = "https://" + addrB
	waitFor(t, 2*time.Minute, "the second gateway serving the seeded inventory", func() bool { return b.api.ready() })

	// A restart under two power replicas.
	const restarted = "restart-me"
	createVM(t, b.api, restarted)
	on := waitPoweredOn(t, a.api, []string{restarted}, 3*time.Minute)
	patch := []byte(`{"spec":{"nextRestartTime":"now"}}`)
	if code, body, err := a.api.doAs("PATCH", vmsPath+"/"+restarted, patch, "application/merge-patch+json"); err != nil || code != http.StatusOK {
		t.Fatalf("restart: %d %s %v", code, body, err)
	}
	waitVM(t, a.api, restarted, "the restart reported", time.Minute, func(vm listedVM) bool { return vm.Status.LastRestartTime != "" })

	// 100 creates, alternating between the gateways; a NATS node stops after 30 and the
	// second replica of everything is killed after 60.
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("replicated-%03d", i)
		switch i {
		case 30:
			cluster.Nodes[0].Shutdown()
		case 60:
			b.kill()
		}
		gw := a.api
		if i%2 == 1 && i < 60 {
			gw = b.api
		}
		createVM(t, gw, names[i])
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range []*vmopProcess{a, b} {
				log, _ := os.ReadFile(p.log)
				t.Logf("warnings of %s:\n%s", p.log, warnings(log))
			}
		}
	})
	vms := waitPoweredOn(t, a.api, names, 6*time.Minute)

	if got := simVMs(t, sim) - vmsBefore; got != len(names)+1 {
		t.Errorf("vcsim has %d new VMs, want %d", got, len(names)+1)
	}
	creates := calls.count("create")
	powerOns := calls.count("PowerOnVM_Task")
	if len(creates) != len(names)+1 {
		t.Errorf("%d VMs created in vCenter, want %d", len(creates), len(names)+1)
	}
	for name, n := range creates {
		if n != 1 {
			t.Errorf("VM %s created %d times", name, n)
		}
	}
	for _, name := range append(names, restarted) {
		id := vms[name].Status.UniqueID
		if n := powerOns[id]; n != 1 {
			t.Errorf("VM %s (%s) powered on %d times, want once", name, id, n)
		}
	}
	id := on[restarted].Status.UniqueID
	if n := calls.count("ResetVM_Task")[id] + calls.count("RebootGuest")[id]; n != 1 {
		t.Errorf("the restart of %s reset or rebooted it %d times, want once", restarted, n)
	}
}

// copyFiles copies files and directories (one level deep) from one data directory to
// another, private to the user as the stack keeps them.
func copyFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	for _, name := range names {
		src := filepath.Join(from, name)
		entries, err := os.ReadDir(src)
		if err != nil { // a file
			copyFile(t, src, filepath.Join(to, name))
			continue
		}
		if err := os.MkdirAll(filepath.Join(to, name), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			copyFile(t, filepath.Join(src, e.Name()), filepath.Join(to, name, e.Name()))
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// simVMs counts vcsim's virtual machines.
func simVMs(t *testing.T, sim *inventory.Sim) int {
	t.Helper()
	c, err := sim.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Logout(t.Context())
	v, err := view.NewManager(c.Client).CreateContainerView(t.Context(), c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Destroy(t.Context())
	refs, err := v.Find(t.Context(), []string{"VirtualMachine"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return len(refs)
}

// warnings are the lines of a log above INFO, at most the last 60.
func warnings(log []byte) string {
	var out []string
	for line := range strings.Lines(string(log)) {
		if !strings.Contains(line, "level=INFO") {
			out = append(out, line)
		}
	}
	return strings.Join(out[max(0, len(out)-60):], "")
}

type listedVM struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		PowerState      string `json:"powerState"`
		UniqueID        string `json:"uniqueID"`
		LastRestartTime string `json:"lastRestartTime"`
		Conditions      []struct {
			Type, Status, Reason, Message string
		} `json:"conditions"`
	} `json:"status"`
}

func createVM(t *testing.T, c *apiClient, name string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		code, body, err := c.do("POST", vmsPath, benchVM(name))
		if err == nil && code == http.StatusCreated {
			return
		}
		// A write meeting the NATS cluster's election is retried, as a client would; a
		// conflict means the earlier attempt was stored after all.
		if code == http.StatusConflict {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create %s: %d %s %v", name, code, body, err)
		}
		time.Sleep(200 * time.Millisecond) // a client's retry interval
	}
}

// waitPoweredOn waits until every named VM reports PoweredOn and returns them.
func waitPoweredOn(t *testing.T, c *apiClient, names []string, within time.Duration) map[string]listedVM {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		vms := listVMs(t, c)
		missing := 0
		for _, n := range names {
			if vms[n].Status.PowerState != "PoweredOn" || vms[n].Status.UniqueID == "" {
				missing++
			}
		}
		if missing == 0 {
			return vms
		}
		if time.Now().After(deadline) {
			var stuck []string
			for _, n := range names {
				if vms[n].Status.PowerState != "PoweredOn" || vms[n].Status.UniqueID == "" {
					stuck = append(stuck, fmt.Sprintf("%s %+v", n, vms[n].Status))
				}
			}
			t.Fatalf("%d of %d VMs not PoweredOn within %v:\n%s", missing, len(names), within, strings.Join(stuck, "\n"))
		}
		time.Sleep(500 * time.Millisecond) // poll interval of a condition with a deadline
	}
}

func waitVM(t *testing.T, c *apiClient, name, what string, within time.Duration, ok func(listedVM) bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok(listVMs(t, c)[name]) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not %s within %v", name, what, within)
		}
		time.Sleep(200 * time.Millisecond) // poll interval of a condition with a deadline
	}
}

// listVMs lists the VMs through c; none while the gateway answers 504 (its read model
// behind the streams for longer than a consistent read waits, as just after a NATS node
// is lost), which the callers' polls ride out as a client retrying would.
func listVMs(t *testing.T, c *apiClient) map[string]listedVM {
	t.Helper()
	code, body, err := c.do("GET", vmsPath, nil)
	if err == nil && code == http.StatusGatewayTimeout {
		return nil
	}
	if err != nil || code != http.StatusOK {
		t.Fatalf("list VMs: %d %s %v", code, body, err)
	}
	var list struct{ Items []listedVM }
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]listedVM, len(list.Items))
	for _, vm := range list.Items {
		out[vm.Metadata.Name] = vm
	}
	return out
}
