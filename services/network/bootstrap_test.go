package network

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

func putSecret(t *testing.T, js jetstream.JetStream, name string, data map[string]string) {
	t.Helper()
	enc := map[string]any{}
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	ref := events.Ref{Plural: pluralSecrets, Namespace: "my-namespace", Name: name}
	body := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name, "namespace": "my-namespace"}, "data": enc}
	if err := deploytest.PutObject(t.Context(), js, ref, body); err != nil {
		t.Fatal(err)
	}
}

func findCondition(st model.VirtualMachineStatus, typ string) metav1.Condition {
	if c := reconcile.FindCondition(st.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func bootstrapReady(_ events.Slice, st model.VirtualMachineStatus) bool {
	s, _ := deploytest.Condition(st, model.ConditionBootstrapReady)
	return s == "True"
}

// linuxPrepVM is the acceptance's VM: host name, domain, time zone, a static address and
// gateway on eth0, two global DNS servers.
func linuxPrepVM(name string) *deploytest.VM {
	return deploytest.NewVM("my-namespace", name, model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName,
		Bootstrap: &model.VirtualMachineBootstrapSpec{LinuxPrep: &model.VirtualMachineBootstrapLinuxPrepSpec{
			TimeZone: "Europe/Sofia", HardwareClockIsUTC: new(true),
		}},
		Network: &model.VirtualMachineNetworkSpec{
			HostName: "lp-host", DomainName: "example.com", Nameservers: []string{"10.0.0.53", "10.0.1.53"},
			Interfaces: []model.VirtualMachineNetworkInterfaceSpec{{
				Name: "eth0", Network: &model.PartialObjectRef{Name: "VM Network"},
				Addresses: []string{"192.168.0.50/24"}, Gateway4: "192.168.0.1",
			}},
		},
	})
}

// guestView is what vcsim shows of a VM's guest and customization.
func guestView(t *testing.T, vm *object.VirtualMachine) mo.VirtualMachine {
	t.Helper()
	var out mo.VirtualMachine
	err := vm.Properties(context.Background(), vm.Reference(), []string{"guest", "config.tools", "config.extraConfig", "config.vAppConfig"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// customizationEvents are the names of the VM's customization events, oldest first.
func customizationEvents(t *testing.T, vm *object.VirtualMachine) []string {
	t.Helper()
	var out []string
	m := event.NewManager(vm.Client())
	evs, err := m.QueryEvents(context.Background(), types.EventFilterSpec{Entity: &types.EventFilterSpecByEntity{Entity: vm.Reference(), Recursion: types.EventFilterSpecRecursionOptionSelf}})
	if err != nil {
		t.Fatal(err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].(type) {
		case *types.CustomizationStartedEvent:
			out = append(out, "started")
		case *types.CustomizationSucceeded:
			out = append(out, "succeeded")
		case *types.CustomizationFailed, *types.CustomizationNetworkSetupFailed:
			out = append(out, "failed")
		}
	}
	return out
}

// A LinuxPrep VM is customized once before its first power-on: BootstrapReady turns True
// only once vCenter holds the customization, which a power-on applies (events, host name,
// address) and GuestCustomization then reports. A crash right after the CustomizeVM task
// (the hook fails once) is redelivered, records the customization and does not customize
// again (vCenter would refuse a second one while the first is pending).
func TestLinuxPrepCustomizedOnceBeforePowerOn(t *testing.T) {
	var crashed atomic.Bool
	afterCustomizeVM = func() error {
		if crashed.CompareAndSwap(false, true) {
			return errors.New("crash after the customization")
		}
		return nil
	}
	t.Cleanup(func() { afterCustomizeVM = func() error { return nil } })
	js := startService(t)
	v := linuxPrepVM("linuxprep")
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	_, st := v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True", bootstrapReady)
	if !crashed.Load() {
		t.Fatal("the customization was recorded without passing the crash hook")
	}
	if c := findCondition(st, model.ConditionGuestCustomization); c.Reason != model.ReasonGuestCustomizationPending {
		t.Errorf("GuestCustomization before power-on: %+v, want Pending", c)
	}
	g := guestView(t, vm)
	if g.Config.Tools == nil || g.Config.Tools.PendingCustomization == "" {
		t.Fatal("no customization pending in vCenter")
	}
	ec := extraConfigOf(g)
	if ec[keyCustomization] == "" || ec[keyCustomization] != ec[keyCustomizing] {
		t.Errorf("recorded customization %q, handed over %q", ec[keyCustomization], ec[keyCustomizing])
	}

	powerOn(t, vm)
	g = guestView(t, vm)
	if got := customizationEvents(t, vm); strings.Join(got, ",") != "started,succeeded" {
		t.Errorf("customization events %v, want started,succeeded", got)
	}
	if g.Guest.HostName != "lp-host" || g.Guest.IpAddress != "192.168.0.50" {
		t.Errorf("guest host name %q, address %q: want lp-host, 192.168.0.50", g.Guest.HostName, g.Guest.IpAddress)
	}
	v.Put(t, js, false) // as power's slice would, a change makes the service look again
	v.WaitStatus(t, js, model.ServiceNetwork, "GuestCustomization True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, r := deploytest.Condition(st, model.ConditionGuestCustomization)
		return s == "True" && r == model.ReasonGuestCustomizationSucceeded
	})
	if got := customizationEvents(t, vm); len(got) != 2 {
		t.Errorf("customization events after a further reconcile: %v", got)
	}
}

// A cloud-init VM whose rawCloudConfig Secret does not exist waits, naming it; once the
// Secret appears its value (gzip+base64 in the Secret) lands decoded in guestinfo.userdata.
func TestRawCloudConfigWaitsForItsSecret(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "raw-cloud-config", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName,
		Bootstrap: &model.VirtualMachineBootstrapSpec{CloudInit: &model.VirtualMachineBootstrapCloudInitSpec{
			RawCloudConfig: &model.SecretKeySelector{Name: "late-cloud-config", Key: "user-data"},
		}},
	})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	_, st := v.WaitStatus(t, js, model.ServiceNetwork, "RequiredKeyNotFound", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		_, r := deploytest.Condition(st, model.ConditionBootstrapReady)
		return r == model.ReasonRequiredKeyNotFound
	})
	if c := findCondition(st, model.ConditionBootstrapReady); !strings.Contains(c.Message, `secret "late-cloud-config" not found`) {
		t.Errorf("message %q does not name the secret", c.Message)
	}
	const userdata = "#cloud-config\nruncmd:\n- echo distinctive-7c2e\n"
	zipped, err := gzipBase64(userdata)
	if err != nil {
		t.Fatal(err)
	}
	putSecret(t, js, "late-cloud-config", map[string]string{"user-data": zipped})
	v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True", bootstrapReady)
	if got := gunzip(t, extraConfig(t, vm)[keyUserdata]); got != userdata {
		t.Errorf("guestinfo.userdata decodes to %q, want the Secret's %q", got, userdata)
	}
}

// Sysprep from a Secret holding an unattend file is handed to vCenter as the
// customization's sysprep text.
func TestRawSysprepFromSecret(t *testing.T) {
	js := startService(t)
	putSecret(t, js, "unattend", map[string]string{"unattend.xml": "<unattend>distinctive-4b1d</unattend>"})
	v := deploytest.NewVM("my-namespace", "sysprep", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName,
		Bootstrap: &model.VirtualMachineBootstrapSpec{Sysprep: &model.VirtualMachineBootstrapSysprepSpec{
			RawSysprep: &model.SecretKeySelector{Name: "unattend", Key: "unattend.xml"},
		}},
	})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True", bootstrapReady)
	powerOn(t, vm)
	if got := customizationEvents(t, vm); strings.Join(got, ",") != "started,succeeded" {
		t.Errorf("customization events %v, want started,succeeded", got)
	}
}

// vApp properties the image declares get their values (one from a Secret); a key it does
// not declare is named in the condition.
func TestVAppProperties(t *testing.T) {
	js := startService(t)
	putSecret(t, js, "vapp", map[string]string{"keys": "ssh-ed25519 AAAA distinctive"})
	v := deploytest.NewVM("my-namespace", "vapp", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName,
		Bootstrap: &model.VirtualMachineBootstrapSpec{VAppConfig: &model.VirtualMachineBootstrapVAppConfigSpec{
			Properties: []model.KeyValueOrSecretKeySelectorPair{
				{Key: "hostname", Value: &model.ValueOrSecretKeySelector{Value: new("vapp-host")}},
				{Key: "public-keys", Value: &model.ValueOrSecretKeySelector{From: &model.SecretKeySelector{Name: "vapp", Key: "keys"}}},
			},
		}},
	})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True", bootstrapReady)
	props := map[string]string{}
	if info, ok := guestView(t, vm).Config.VAppConfig.(*types.VmConfigInfo); ok {
		for _, p := range info.Property {
			props[p.Id] = p.Value
		}
	}
	if props["hostname"] != "vapp-host" || props["public-keys"] != "ssh-ed25519 AAAA distinctive" {
		t.Errorf("vApp properties %v", props)
	}

	bad := deploytest.NewVM("my-namespace", "vapp-bad", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName,
		Bootstrap: &model.VirtualMachineBootstrapSpec{VAppConfig: &model.VirtualMachineBootstrapVAppConfigSpec{
			Properties: []model.KeyValueOrSecretKeySelectorPair{{Key: "no-such-key", Value: &model.ValueOrSecretKeySelector{Value: new("x")}}},
		}},
	})
	bad.Put(t, js, false)
	bad.Deploy(t, vc, js, inventory.PhotonImage)
	_, st := bad.WaitStatus(t, js, model.ServiceNetwork, "Invalid", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		_, r := deploytest.Condition(st, model.ConditionBootstrapReady)
		return r == model.ReasonInvalid
	})
	if c := findCondition(st, model.ConditionBootstrapReady); !strings.Contains(c.Message, `"no-such-key"`) {
		t.Errorf("message %q does not name the key", c.Message)
	}
}

// customizeAtNextPowerOn: true customizes even an unchanged customization at the next
// power-on and is then written back false (a new generation, which the service reports
// ready without customizing again).
func TestCustomizeAtNextPowerOnIsWrittenFalse(t *testing.T) {
	js := startService(t)
	v := linuxPrepVM("at-next-power-on")
	v.Spec.Bootstrap.LinuxPrep.CustomizeAtNextPowerOn = new(true)
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True at generation 2", func(s events.Slice, st model.VirtualMachineStatus) bool {
		return s.Generation == 2 && bootstrapReady(s, st)
	})
	rec, err := events.LastSpec(t.Context(), js, v.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var stored model.VirtualMachine
	if err := json.Unmarshal(rec.Body, &stored); err != nil {
		t.Fatal(err)
	}
	if at := stored.Spec.Bootstrap.LinuxPrep.CustomizeAtNextPowerOn; at == nil || *at || stored.Generation != 2 {
		t.Errorf("customizeAtNextPowerOn %v at generation %d, want false at 2", at, stored.Generation)
	}
	powerOn(t, vm)
	if got := customizationEvents(t, vm); strings.Join(got, ",") != "started,succeeded" {
		t.Errorf("customization events %v, want started,succeeded", got)
	}
}

// With the cloudinitprep delivery the cloud-init meta-data (its network configuration
// included) and user data go to vCenter as a guest customization (with the guestinfo
// transport of the OVF environment enabled, which vcsim does not keep); a power-on
// applies it.
func TestCloudInitPrep(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "cloudinitprep", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName,
		Bootstrap: &model.VirtualMachineBootstrapSpec{CloudInit: &model.VirtualMachineBootstrapCloudInitSpec{
			CloudConfig: &model.CloudConfig{Timezone: "UTC"},
		}},
		Network: &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{{
			Name: "eth0", Network: &model.PartialObjectRef{Name: "VM Network"}, Addresses: []string{"192.168.0.60/24"}, Gateway4: "192.168.0.1",
		}}},
	})
	v.Annotations = map[string]string{annotationCloudInitType: "cloudinitprep"}
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True", bootstrapReady)
	g := guestView(t, vm)
	if _, ok := extraConfigOf(g)[keyUserdata]; ok {
		t.Error("cloudinitprep wrote guestinfo.userdata too")
	}
	powerOn(t, vm)
	g = guestView(t, vm)
	if got := customizationEvents(t, vm); strings.Join(got, ",") != "started,succeeded" {
		t.Errorf("customization events %v", got)
	}
	if g.Guest.HostName != "cloudinitprep" || g.Guest.IpAddress != "192.168.0.60" {
		t.Errorf("guest host name %q, address %q", g.Guest.HostName, g.Guest.IpAddress)
	}
}

// A Linux VM without a bootstrap and without CD-ROMs gets the implied LinuxPrep (api-rules
// §10): customized at first power-on with its name as host name.
func TestImplicitLinuxPrep(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "no-bootstrap", model.VirtualMachineSpec{ClassName: inventory.SeedClassName})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	_, st := v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True", bootstrapReady)
	if c := findCondition(st, model.ConditionGuestCustomization); c.Reason != model.ReasonGuestCustomizationPending {
		t.Errorf("GuestCustomization %+v, want Pending", c)
	}
	powerOn(t, vm)
	if got := customizationEvents(t, vm); strings.Join(got, ",") != "started,succeeded" {
		t.Errorf("customization events %v", got)
	}
	if g := guestView(t, vm); g.Guest.HostName != "no-bootstrap" {
		t.Errorf("guest host name %q", g.Guest.HostName)
	}
}

// A LinuxPrep change while vCenter still holds the first customization for the first
// power-on (it takes no second one) waits for that power-on without holding it back:
// BootstrapReady stays True, saying so, and the change is not recorded as delivered,
// which would make it never be. Once that power-on applied the first and the VM is off
// again, the changed one is handed over for the power-on after.
func TestChangedCustomizationWaitsBehindThePendingOne(t *testing.T) {
	js := startService(t)
	v := linuxPrepVM("linuxprep-changed")
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True", bootstrapReady)
	first := extraConfigOf(guestView(t, vm))[keyCustomization]

	v.Spec.Network.HostName = "lp-renamed"
	v.Put(t, js, false)
	_, st := v.WaitStatus(t, js, model.ServiceNetwork, "the change noted behind the pending customization", func(s events.Slice, st model.VirtualMachineStatus) bool {
		c := findCondition(st, model.ConditionBootstrapReady)
		return s.Generation == v.Generation() && c.Status == "True" && strings.Contains(c.Message, "applied at the next power-on")
	})
	if got := extraConfigOf(guestView(t, vm))[keyCustomization]; got != first {
		t.Errorf("recorded customization %q after the change, want the pending one's %q (%+v)", got, first, findCondition(st, model.ConditionBootstrapReady))
	}

	powerOn(t, vm) // applies the first
	if g := guestView(t, vm); g.Guest.HostName != "lp-host" || pendingCustomization(g) {
		t.Fatalf("after the power-on: guest host name %q, pending %v; want the first customization applied", g.Guest.HostName, pendingCustomization(g))
	}
	if task, err := vm.PowerOff(t.Context()); err != nil || task.Wait(t.Context()) != nil {
		t.Fatalf("power off: %v", err)
	}
	// Power's slice is what wakes network when the VM's power state changes.
	off, err := json.Marshal(model.VirtualMachineStatus{PowerState: model.PowerStateOff})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.PublishStatus(t.Context(), js, v.Ref, events.Slice{Service: model.ServicePower, UID: v.UID, Generation: v.Generation(), Status: off}); err != nil {
		t.Fatal(err)
	}
	v.WaitStatus(t, js, model.ServiceNetwork, "the changed customization handed over", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		c := findCondition(st, model.ConditionBootstrapReady)
		return c.Status == "True" && c.Message == ""
	})
	if g := guestView(t, vm); extraConfigOf(g)[keyCustomization] == first || !pendingCustomization(g) {
		t.Errorf("once the VM was off again: recorded customization %q (the first was %q), pending %v; want the changed one handed over",
			extraConfigOf(g)[keyCustomization], first, pendingCustomization(g))
	}
}

// The implied LinuxPrep goes by the configured guest ID, not by what VMware Tools report:
// before the first boot, which it customizes, Tools have said nothing.
func TestImplicitLinuxPrepByConfiguredGuest(t *testing.T) {
	tests := []struct {
		guestID, toolsFamily string
		want                 bool
	}{
		{"vmwarePhoton64Guest", "", true},
		{"ubuntu64Guest", "", true},
		{"windows2019srv_64Guest", string(types.VirtualMachineGuestOsFamilyLinuxGuest), false},
		{"otherGuest64", "", false},
	}
	for _, tt := range tests {
		vm := &model.VirtualMachine{}
		mvm := mo.VirtualMachine{Config: &types.VirtualMachineConfigInfo{GuestId: tt.guestID}, Guest: &types.GuestInfo{GuestFamily: tt.toolsFamily}}
		if got := implicitLinuxPrep(vm, mvm); got != tt.want {
			t.Errorf("guest ID %s, Tools' family %q: implied LinuxPrep %v, want %v", tt.guestID, tt.toolsFamily, got, tt.want)
		}
	}
}
