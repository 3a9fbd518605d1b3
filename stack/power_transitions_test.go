package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// TestPowerTransitions walks every cell of the seed's power transition table ("Power
// Management → Transitions", api-rules §7.1) through the REST API, one VM moving from
// each observed state to each desired operation: allowed cells reach vcsim and status,
// NA cells change nothing, refused cells get 422 with the field path and change nothing.
func TestPowerTransitions(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	api, err := newAPIClient(tp.kubeconfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	const name = "cells"
	p := &powerWalk{t: t, tp: tp, vc: vc, api: api, name: name}

	// Default on create: no spec.powerState means PoweredOn.
	p.create()
	p.reach("PoweredOn", types.VirtualMachinePowerStatePoweredOn)
	if got := p.get("{.spec.powerState}"); got != "PoweredOn" {
		t.Errorf("spec.powerState defaulted to %q, want PoweredOn", got)
	}

	// Observed PoweredOn.
	p.cell("PoweredOn → power on: NA", `{"spec":{"powerState":"PoweredOn"}}`, 0, "")
	p.reach("PoweredOn", types.VirtualMachinePowerStatePoweredOn)
	p.restart()
	p.cell("PoweredOn → suspend", `{"spec":{"powerState":"Suspended","suspendMode":"Hard"}}`, 0, "")
	p.reach("Suspended", types.VirtualMachinePowerStateSuspended)

	// Observed Suspended. A restart of a VM desired Suspended is refused by defaulting
	// (D15, 403); one desired PoweredOn but held suspended by a power-on check, by
	// validation against the observed state (PWR-10, 422).
	p.cell("Suspended → suspend: NA", `{"spec":{"powerState":"Suspended"}}`, 0, "")
	p.reach("Suspended", types.VirtualMachinePowerStateSuspended)
	p.cell("Suspended → restart (desired Suspended): refused", `{"spec":{"nextRestartTime":"now"}}`, http.StatusForbidden, "spec.nextRestartTime")
	p.cell("Suspended → power off Soft: refused", `{"spec":{"powerState":"PoweredOff","powerOffMode":"Soft"}}`, http.StatusUnprocessableEntity, "spec.powerState")
	p.hold("Suspended", types.VirtualMachinePowerStateSuspended)
	p.cell("Suspended → restart (desired PoweredOn): refused", `{"spec":{"nextRestartTime":"now"}}`, http.StatusUnprocessableEntity, "spec.nextRestartTime")
	p.cell("Suspended → resume", holdCheck(false), 0, "")
	p.reach("PoweredOn", types.VirtualMachinePowerStatePoweredOn)
	p.cell("PoweredOn → suspend again", `{"spec":{"powerState":"Suspended"}}`, 0, "")
	p.reach("Suspended", types.VirtualMachinePowerStateSuspended)
	p.cell("Suspended → power off TrySoft (acts hard)", `{"spec":{"powerState":"PoweredOff","powerOffMode":"TrySoft"}}`, 0, "")
	p.reach("PoweredOff", types.VirtualMachinePowerStatePoweredOff)
	p.cell("PoweredOff → power on", `{"spec":{"powerState":"PoweredOn"}}`, 0, "")
	p.reach("PoweredOn", types.VirtualMachinePowerStatePoweredOn)
	p.cell("PoweredOn → suspend once more", `{"spec":{"powerState":"Suspended"}}`, 0, "")
	p.reach("Suspended", types.VirtualMachinePowerStateSuspended)
	p.cell("Suspended → power off Hard", `{"spec":{"powerState":"PoweredOff","powerOffMode":"Hard"}}`, 0, "")
	p.reach("PoweredOff", types.VirtualMachinePowerStatePoweredOff)

	// Observed PoweredOff, desired PoweredOff (PWR-3, D15) and then desired PoweredOn but
	// held off by a power-on check (PWR-11, PWR-10).
	p.cell("PoweredOff → power off: NA", `{"spec":{"powerState":"PoweredOff"}}`, 0, "")
	p.reach("PoweredOff", types.VirtualMachinePowerStatePoweredOff)
	p.cell("PoweredOff → suspend (desired PoweredOff): refused", `{"spec":{"powerState":"Suspended"}}`, http.StatusUnprocessableEntity, "spec.powerState")
	p.cell("PoweredOff → restart (desired PoweredOff): refused", `{"spec":{"nextRestartTime":"now"}}`, http.StatusForbidden, "spec.nextRestartTime")
	p.hold("PoweredOff", types.VirtualMachinePowerStatePoweredOff)
	p.cell("PoweredOff → suspend (desired PoweredOn): refused", `{"spec":{"powerState":"Suspended"}}`, http.StatusUnprocessableEntity, "spec.powerState")
	p.cell("PoweredOff → restart (desired PoweredOn): refused", `{"spec":{"nextRestartTime":"now"}}`, http.StatusUnprocessableEntity, "spec.nextRestartTime")
	p.cell("PoweredOff → power on", holdCheck(false), 0, "")
	p.reach("PoweredOn", types.VirtualMachinePowerStatePoweredOn)

	// Observed PoweredOn, the last cell.
	p.cell("PoweredOn → power off Hard", `{"spec":{"powerState":"PoweredOff","powerOffMode":"Hard"}}`, 0, "")
	p.reach("PoweredOff", types.VirtualMachinePowerStatePoweredOff)
}

// TestSoftPowerOffThroughTheAPI: Soft without VMware Tools says so in the condition and
// leaves the VM running; once Tools run the guest is shut down.
func TestSoftPowerOffThroughTheAPI(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	api, err := newAPIClient(tp.kubeconfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := &powerWalk{t: t, tp: tp, vc: vc, api: api, name: "soft"}
	p.create()
	p.reach("PoweredOn", types.VirtualMachinePowerStatePoweredOn)

	p.cell("Soft power-off without Tools", `{"spec":{"powerState":"PoweredOff","powerOffMode":"Soft"}}`, 0, "")
	tp.eventually("the condition names the missing Tools", func() bool {
		return strings.Contains(p.get(`{.status.conditions[?(@.type=="VirtualMachinePowerStateSynced")].message}`),
			"VMware Tools are not running: powerOffMode Soft needs them")
	})
	if got := tp.power(vc, p.name); got != types.VirtualMachinePowerStatePoweredOn {
		t.Fatalf("VM is %s while Soft waits for Tools, want poweredOn", got)
	}
	vm := tp.vm(vc, p.name)
	task, err := vm.Reconfigure(t.Context(), types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
		&types.OptionValue{Key: "SET.guest.toolsRunningStatus", Value: string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)},
	}})
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
	// A new SPECS record (a label: same generation) has the service look again at once,
	// rather than at its next retry.
	p.cell("label", `{"metadata":{"labels":{"tools":"running"}}}`, 0, "")
	p.reach("PoweredOff", types.VirtualMachinePowerStatePoweredOff)
}

// powerWalk drives one VM through the REST API and checks it in vcsim.
type powerWalk struct {
	t    *testing.T
	tp   *topology
	vc   *govmomi.Client
	api  *apiClient
	name string
}

// create creates the VM from vm-example once the gateway knows its image (the seeded
// inventory appears in the read model piece by piece).
func (p *powerWalk) create() {
	p.t.Helper()
	var code int
	var body []byte
	p.tp.eventually("vm-example accepted", func() bool {
		code, body = p.send(http.MethodPost, vmsPath, benchVM(p.name))
		return code == http.StatusCreated || !bytes.Contains(body, []byte("spec.imageName"))
	})
	if code != http.StatusCreated {
		p.t.Fatalf("create: %d %s", code, body)
	}
}

// cell sends a merge patch. code 0 means accepted; otherwise the request must be refused
// with that code (422 Invalid, or 403 Forbidden for a defaulting denial), its causes at
// field (PWR-3 and PWR-11 may both speak), and leave the object as it was.
func (p *powerWalk) cell(what, patch string, code int, field string) {
	p.t.Helper()
	before := p.get("{.metadata.resourceVersion} {.spec.powerState} {.spec.powerOffMode} {.spec.nextRestartTime}")
	got, body := p.send(http.MethodPatch, vmsPath+"/"+p.name, []byte(patch))
	if code == 0 {
		if got != http.StatusOK {
			p.t.Fatalf("%s: %d %s", what, got, body)
		}
		return
	}
	var status struct {
		Code    int
		Reason  string
		Details struct {
			Causes []struct{ Field, Message string }
		}
	}
	reason := "Invalid" // validation (stage 3)
	if code == http.StatusForbidden {
		reason = "Forbidden" // a defaulting denial (stage 2, api-rules §5)
	}
	if err := json.Unmarshal(body, &status); err != nil || got != code || status.Code != code || status.Reason != reason {
		p.t.Fatalf("%s: %d %s, want %d %s", what, got, body, code, reason)
	}
	var fields []string
	for _, c := range status.Details.Causes {
		fields = append(fields, c.Field)
	}
	if len(fields) == 0 || slices.ContainsFunc(fields, func(f string) bool { return f != field }) {
		p.t.Errorf("%s: causes at %v, want them at %s (%s)", what, fields, field, body)
	}
	if after := p.get("{.metadata.resourceVersion} {.spec.powerState} {.spec.powerOffMode} {.spec.nextRestartTime}"); after != before {
		p.t.Errorf("%s: a refused patch changed the object: %q → %q", what, before, after)
	}
}

const checkAnnotation = "poweron.check.vmoperator.vmware.com/transitions"

// holdCheck is the patch adding (with desired PoweredOn) or removing the power-on check.
func holdCheck(add bool) string {
	if add {
		return `{"metadata":{"annotations":{"` + checkAnnotation + `":"hold"}},"spec":{"powerState":"PoweredOn"}}`
	}
	return `{"metadata":{"annotations":{"` + checkAnnotation + `":null}}}`
}

// hold asks for PoweredOn with a power-on check, so the VM stays observed in state.
func (p *powerWalk) hold(state string, inVC types.VirtualMachinePowerState) {
	p.t.Helper()
	p.cell(state+" → power on, held by a check", holdCheck(true), 0, "")
	p.tp.eventually(p.name+" held "+state, func() bool {
		got := p.get(`{.status.powerState} {.status.conditions[?(@.type=="VirtualMachinePowerStateSynced")].reason}`)
		return got == state+" PowerOnBlocked" && p.tp.power(p.vc, p.name) == inVC
	})
}

// reach waits until status, the condition and vcsim all show state.
func (p *powerWalk) reach(state string, inVC types.VirtualMachinePowerState) {
	p.t.Helper()
	p.tp.eventually(p.name+" "+state+" everywhere", func() bool {
		got := p.get(`{.status.powerState} {.status.conditions[?(@.type=="VirtualMachinePowerStateSynced")].status}`)
		return got == state+" True" && p.tp.power(p.vc, p.name) == inVC
	})
}

// restart asks for a restart with "now" and checks that it happened once: the value is
// a time, vcsim records it in ExtraConfig and shows one more power-on, status reports it.
func (p *powerWalk) restart() {
	p.t.Helper()
	before := p.powerOns()
	p.cell("PoweredOn → restart", `{"spec":{"nextRestartTime":"now","restartMode":"Hard"}}`, 0, "")
	asked, err := time.Parse(time.RFC3339Nano, p.get("{.spec.nextRestartTime}"))
	if err != nil {
		p.t.Fatalf("nextRestartTime after admission: %v", err)
	}
	p.tp.eventually("status.lastRestartTime", func() bool {
		got, err := time.Parse(time.RFC3339, p.get("{.status.lastRestartTime}"))
		return err == nil && got.Unix() == asked.Unix()
	})
	if got := p.extraConfig(vcenter.KeyLastRestart); got != strconv.FormatInt(asked.UnixNano(), 10) {
		p.t.Errorf("%s = %q, want %d", vcenter.KeyLastRestart, got, asked.UnixNano())
	}
	p.reach("PoweredOn", types.VirtualMachinePowerStatePoweredOn)
	if after := p.powerOns(); after != before+1 {
		p.t.Errorf("%d power-ons in vcsim after the restart, want %d (a reset is vcsim's power-off and power-on)", after, before+1)
	}
}

// powerOns counts the VM's power-on events in vcsim.
func (p *powerWalk) powerOns() int {
	p.t.Helper()
	vm := p.tp.vm(p.vc, p.name)
	evs, err := event.NewManager(p.vc.Client).QueryEvents(p.t.Context(), types.EventFilterSpec{
		Entity:      &types.EventFilterSpecByEntity{Entity: vm.Reference(), Recursion: types.EventFilterSpecRecursionOptionSelf},
		EventTypeId: []string{"VmPoweredOnEvent"},
	})
	if err != nil {
		p.t.Fatal(err)
	}
	return len(evs)
}

func (p *powerWalk) extraConfig(key string) string {
	p.t.Helper()
	vm := p.tp.vm(p.vc, p.name)
	var o mo.VirtualMachine
	if err := vm.Properties(p.t.Context(), vm.Reference(), []string{`config.extraConfig["` + key + `"]`}, &o); err != nil {
		p.t.Fatal(err)
	}
	if o.Config != nil {
		for _, opt := range o.Config.ExtraConfig {
			if kv := opt.GetOptionValue(); kv.Key == key {
				return fmt.Sprint(kv.Value)
			}
		}
	}
	return ""
}

// get reads a JSONPath of the VM through kubectl.
func (p *powerWalk) get(jsonpath string) string {
	p.t.Helper()
	return p.tp.kubectl("get", "vm", p.name, "-n", benchNamespace, "-o", "jsonpath="+jsonpath)
}

// send makes one REST call as the admin; a PATCH is a JSON merge patch.
func (p *powerWalk) send(method, path string, body []byte) (int, []byte) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.t.Context(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.api.server+path, bytes.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.api.token)
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	resp, err := p.api.http.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return resp.StatusCode, data
}
