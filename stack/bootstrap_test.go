package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/vcenter"
)

// syncBuffer collects log output written from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// captureLogs sends every slog and log line of the process to a buffer until the test ends.
func captureLogs(t *testing.T) *syncBuffer {
	buf := &syncBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return buf
}

const linuxPrepVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: linuxprep-vm
spec:
  className: my-vm-class
  imageName: vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
  powerState: PoweredOn
  bootstrap:
    linuxPrep:
      timeZone: Europe/Sofia
      hardwareClockIsUTC: true
  network:
    hostName: lp-host
    domainName: example.com
    nameservers: ["10.0.0.53", "10.0.1.53"]
    interfaces:
    - name: eth0
      addresses: ["192.168.0.50/24"]
      gateway4: 192.168.0.1
`

const sysprepVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: sysprep-vm
spec:
  className: my-vm-class
  imageName: vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
  powerState: PoweredOn
  bootstrap:
    sysprep:
      rawSysprep:
        name: unattend
        key: unattend.xml
`

const vAppVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: vapp-vm
spec:
  className: my-vm-class
  imageName: vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
  powerState: PoweredOn
  bootstrap:
    vAppConfig:
      properties:
      - key: hostname
        value:
          value: vapp-host
`

const rawCloudConfigVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: raw-ci-vm
spec:
  className: my-vm-class
  imageName: vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
  powerState: PoweredOn
  bootstrap:
    cloudInit:
      rawCloudConfig:
        name: my-cloud-config
        key: user-data
`

// TestGuestBootstrap walks issue #13's acceptance for the bootstrap providers through
// kubectl as the ordinary user: Secrets made with `kubectl create secret generic
// --from-file`, LinuxPrep, Sysprep from a Secret and vAppConfig applied at first power-on
// in vcsim, a rawCloudConfig Secret that appears after its VM, the bad inputs, a network
// service killed between the customization and the power-on, and the Secrets' content in
// no event, log line, span or read model file.
func TestGuestBootstrap(t *testing.T) {
	logs := captureLogs(t)
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	canary := "canary-" + uuid.NewString()
	userData := "#cloud-config\nruncmd:\n- echo " + canary + "\n"
	unattend := "<unattend><settings>" + canary + "</settings></unattend>"

	// First, so that no VM holds its static address from the VM Network's pool yet.
	t.Run("LinuxPrep is applied at first power-on", func(t *testing.T) {
		tp.apply(linuxPrepVM, "user")
		tp.waitPower("linuxprep-vm", "PoweredOn")
		tp.waitCondition("linuxprep-vm", "GuestCustomization", "True GuestCustomizationSucceeded")
		g := guestOf(t, vc, tp, "linuxprep-vm")
		if g.Guest.HostName != "lp-host" || g.Guest.IpAddress != "192.168.0.50" {
			t.Errorf("guest host name %q, address %q: want lp-host, 192.168.0.50", g.Guest.HostName, g.Guest.IpAddress)
		}
		if got := customizationEvents(t, vc, tp, "linuxprep-vm"); got != "started,succeeded" {
			t.Errorf("customization events %s", got)
		}
		if ip := tp.kubectl("get", "vm", "linuxprep-vm", "-n", "my-namespace", "-o", "jsonpath={.status.network.primaryIP4}"); ip != "192.168.0.50" {
			t.Errorf("primaryIP4 %q", ip)
		}
	})

	t.Run("a VM whose Secret does not exist is created but stays off, naming it", func(t *testing.T) {
		tp.apply(rawCloudConfigVM, "user")
		tp.eventually("BootstrapReady naming the secret while created", func() bool {
			created := tp.condition("raw-ci-vm", "VirtualMachineCreated")
			boot := tp.condition("raw-ci-vm", "VirtualMachineBootstrapReady")
			return strings.HasPrefix(created, "True") && strings.Contains(boot, `secret "my-cloud-config" not found`)
		})
		if p := tp.power(vc, "raw-ci-vm"); p != types.VirtualMachinePowerStatePoweredOff {
			t.Errorf("in vcsim the VM is %s", p)
		}
		if got := tp.kubectl("get", "vm", "raw-ci-vm", "-n", "my-namespace", "-o", "jsonpath={.status.powerState}"); got == "PoweredOn" {
			t.Errorf("status.powerState %s", got)
		}
	})

	t.Run("creating the Secret with --from-file powers it on with the user data", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "user-data")
		if err := os.WriteFile(file, []byte(userData), 0o600); err != nil {
			t.Fatal(err)
		}
		tp.createSecret("my-cloud-config", "--from-file=user-data="+file)
		tp.waitPower("raw-ci-vm", "PoweredOn")
		got := extraConfigOf(t, vc, tp, "raw-ci-vm")["guestinfo.userdata"]
		if decoded := gunzipBase64(t, got); decoded != userData {
			t.Errorf("guestinfo.userdata decodes to %q, want the Secret's %q", decoded, userData)
		}
		out := tp.kubectl("--context", "user", "get", "secret", "my-cloud-config", "-n", "my-namespace", "-o", "jsonpath={.data.user-data}")
		if b, _ := base64.StdEncoding.DecodeString(out); string(b) != userData {
			t.Errorf("kubectl get secret shows %q", out)
		}
	})

	t.Run("Sysprep from a Secret holding an unattend file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "unattend.xml")
		if err := os.WriteFile(file, []byte(unattend), 0o600); err != nil {
			t.Fatal(err)
		}
		tp.createSecret("unattend", "--from-file="+file)
		tp.apply(sysprepVM, "user")
		tp.waitPower("sysprep-vm", "PoweredOn")
		tp.waitCondition("sysprep-vm", "GuestCustomization", "True GuestCustomizationSucceeded")
		if got := customizationEvents(t, vc, tp, "sysprep-vm"); got != "started,succeeded" {
			t.Errorf("customization events %s", got)
		}
	})

	t.Run("vAppConfig properties land in the VM's vApp config", func(t *testing.T) {
		tp.apply(vAppVM, "user")
		tp.waitPower("vapp-vm", "PoweredOn")
		info, _ := guestOf(t, vc, tp, "vapp-vm").Config.VAppConfig.(*types.VmConfigInfo)
		var got string
		for _, p := range info.Property {
			if p.Id == "hostname" {
				got = p.Value
			}
		}
		if got != "vapp-host" {
			t.Errorf("vApp property hostname = %q", got)
		}
	})

	// A customization changed while vCenter holds the first for the first power-on, and one
	// changed while the VM is suspended: neither holds the power-on back for good.
	t.Run("a changed customization never keeps the VM off", func(t *testing.T) {
		vm := strings.NewReplacer("linuxprep-vm", "changed-prep", "powerState: PoweredOn", "powerState: PoweredOff",
			`addresses: ["192.168.0.50/24"]`, `addresses: ["192.168.0.51/24"]`).Replace(linuxPrepVM)
		tp.apply(vm, "user")
		tp.waitCondition("changed-prep", "GuestCustomization", "False GuestCustomizationPending")
		patch := func(p string) {
			tp.kubectl("--context", "user", "patch", "vm", "changed-prep", "-n", "my-namespace", "--type", "merge", "-p", p)
		}
		patch(`{"spec":{"bootstrap":{"linuxPrep":{"timeZone":"Europe/Paris"}}}}`)
		patch(`{"spec":{"powerState":"PoweredOn"}}`)
		tp.waitPower("changed-prep", "PoweredOn")
		tp.waitCondition("changed-prep", "GuestCustomization", "True GuestCustomizationSucceeded")

		patch(`{"spec":{"powerState":"Suspended"}}`)
		tp.waitPower("changed-prep", "Suspended")
		patch(`{"spec":{"bootstrap":{"linuxPrep":{"timeZone":"Europe/Berlin"}}}}`)
		patch(`{"spec":{"powerState":"PoweredOn"}}`)
		tp.waitPower("changed-prep", "PoweredOn")
	})

	t.Run("bad input", func(t *testing.T) {
		bad := strings.Replace(strings.Replace(vAppVM, "vapp-vm", "vapp-bad", 1), "key: hostname", "key: no-such-key", 1)
		out, err := tp.kubectlCtx(t.Context(), []byte(bad), "--context", "user", "apply", "-n", "my-namespace", "-f", "-")
		if err == nil || !strings.Contains(out, "spec.bootstrap.vAppConfig.properties[no-such-key]") {
			t.Errorf("undeclared vApp key: %v\n%s", err, out)
		}
		notBase64 := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bad\ndata:\n  key: \"not base64!\"\n"
		out, err = tp.kubectlCtx(t.Context(), []byte(notBase64), "--context", "user", "apply", "-n", "my-namespace", "-f", "-")
		if err == nil || !strings.Contains(out, "data[key]") {
			t.Errorf("data that is not base64: %v\n%s", err, out)
		}
		big := filepath.Join(t.TempDir(), "big")
		if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 1<<20+1), 0o600); err != nil {
			t.Fatal(err)
		}
		yaml := tp.kubectl("create", "secret", "generic", "big", "-n", "my-namespace", "--from-file="+big, "--dry-run=client", "-o", "yaml")
		out, err = tp.kubectlCtx(t.Context(), []byte(yaml), "--context", "user", "create", "-n", "my-namespace", "-f", "-")
		if err == nil || !strings.Contains(out, "Request entity too large") {
			t.Errorf("a Secret over 1 MiB: %v\n%s", err, out)
		}
	})

	t.Run("network killed between the customization and the power-on", func(t *testing.T) {
		tp.stops["power"]()
		// From the pool: linuxprep-vm holds the static address.
		crashVM := strings.NewReplacer("linuxprep-vm", "crash-vm", "      addresses: [\"192.168.0.50/24\"]\n      gateway4: 192.168.0.1\n", "").Replace(linuxPrepVM)
		tp.apply(crashVM, "user")
		// Network's report must be about the spec power applies: storage's schema upgrade
		// (the image disk back-filled as a claim) changes the spec once after the create.
		tp.eventually("the customization handed to vCenter, for the upgraded spec", func() bool {
			get := func(path string) string {
				out, _ := tp.kubectlErr("get", "vm", "crash-vm", "-n", "my-namespace", "-o", "jsonpath="+path)
				return out
			}
			return strings.HasPrefix(tp.condition("crash-vm", "VirtualMachineUnmanagedVolumesRegistered"), "True") &&
				strings.HasPrefix(tp.condition("crash-vm", "VirtualMachineBootstrapReady"), "True") &&
				get(`{.status.conditions[?(@.type=="VirtualMachineBootstrapReady")].observedGeneration}`) == get("{.metadata.generation}")
		})
		tp.stops["network"]()
		tp.start("power")
		tp.waitPower("crash-vm", "PoweredOn")
		tp.start("network")
		tp.waitCondition("crash-vm", "GuestCustomization", "True GuestCustomizationSucceeded")
		if got := customizationEvents(t, vc, tp, "crash-vm"); got != "started,succeeded" {
			t.Errorf("customization events %s", got)
		}
	})

	t.Run("the Secrets' content is in no event, log line, span or read model file", func(t *testing.T) {
		if strings.Contains(logs.String(), canary) {
			t.Error("a log line holds the secret's content")
		}
		for _, sp := range spans.Ended() {
			text := sp.Name() + sp.Status().Description
			for _, a := range sp.Attributes() {
				text += a.Value.Emit()
			}
			for _, e := range sp.Events() {
				text += e.Name
				for _, a := range e.Attributes {
					text += a.Value.Emit()
				}
			}
			if strings.Contains(text, canary) {
				t.Errorf("span %s holds the secret's content", sp.Name())
			}
		}
		n := 0
		for _, data := range tp.allEvents(t) {
			n++
			if bytes.Contains(data, []byte(canary)) {
				t.Errorf("an EVENTS message holds the secret's content: %.200s", data)
			}
		}
		if n == 0 {
			t.Error("EVENTS is empty: nothing was checked")
		}
		files, _ := filepath.Glob(filepath.Join(tp.data, "api", "*"))
		for _, f := range files {
			if raw, err := os.ReadFile(f); err == nil && (bytes.Contains(raw, []byte(canary)) ||
				bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString([]byte(userData))))) {
				t.Errorf("the read model's %s holds the secret's content", filepath.Base(f))
			}
		}
		if len(files) == 0 {
			t.Error("no read model files: nothing was checked")
		}
		if !strings.Contains(logs.String(), "level=") {
			t.Error("no log line was captured: nothing was checked")
		}
	})
}

// createSecret makes a generic Secret from files or literals as the ordinary user, with
// kubectl's direct create (which sends it in protobuf).
func (tp *topology) createSecret(name string, from ...string) {
	tp.t.Helper()
	args := append([]string{"--context", "user", "create", "secret", "generic", name, "-n", "my-namespace"}, from...)
	if out, err := tp.kubectlErr(args...); err != nil {
		tp.t.Fatalf("create secret %s: %v\n%s", name, err, out)
	}
}

// condition is "<status> <reason> <message>" of the VM's condition, "" when absent.
func (tp *topology) condition(vm, typ string) string {
	out, _ := tp.kubectlErr("get", "vm", vm, "-n", "my-namespace", "-o",
		`jsonpath={.status.conditions[?(@.type=="`+typ+`")].status} {.status.conditions[?(@.type=="`+typ+`")].reason} {.status.conditions[?(@.type=="`+typ+`")].message}`)
	return strings.TrimSpace(out)
}

func (tp *topology) waitCondition(vm, typ, prefix string) {
	tp.t.Helper()
	tp.eventuallyReport(vm+" "+typ+" "+prefix, func() bool {
		return strings.HasPrefix(tp.condition(vm, typ), prefix)
	}, func() string { return tp.condition(vm, typ) })
}

// allEvents are the bodies of every EVENTS message.
func (tp *topology) allEvents(t *testing.T) [][]byte {
	_, js := natsAs(t, tp.env["VMOP_NATS_URL"], tp.data, eventsIdentity)
	s, err := js.Stream(t.Context(), events.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(t.Context(), seq)
		if err != nil {
			continue // deleted or deduplicated
		}
		out = append(out, m.Data)
	}
	return out
}

func guestOf(t *testing.T, vc *govmomi.Client, tp *topology, name string) mo.VirtualMachine {
	t.Helper()
	vm := tp.vm(vc, name)
	var m mo.VirtualMachine
	if err := vm.Properties(t.Context(), vm.Reference(), []string{"guest", "config.extraConfig", "config.vAppConfig"}, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func extraConfigOf(t *testing.T, vc *govmomi.Client, tp *topology, name string) map[string]string {
	out := map[string]string{}
	for _, o := range guestOf(t, vc, tp, name).Config.ExtraConfig {
		v := o.GetOptionValue()
		out[v.Key], _ = v.Value.(string)
	}
	return out
}

// customizationEvents lists the VM's customization events in vcsim, oldest first.
func customizationEvents(t *testing.T, vc *govmomi.Client, tp *topology, name string) string {
	t.Helper()
	vm := tp.vm(vc, name)
	evs, err := event.NewManager(vc.Client).QueryEvents(t.Context(), types.EventFilterSpec{
		Entity: &types.EventFilterSpecByEntity{Entity: vm.Reference(), Recursion: types.EventFilterSpecRecursionOptionSelf},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
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
	return strings.Join(out, ",")
}

func gunzipBase64(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
