package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"sigs.k8s.io/yaml"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/vcenter"
)

// vmExample is VM Operator's docs/concepts/workloads/vm-example.yaml, verbatim.
const vmExample = `apiVersion: vmoperator.vmware.com/v1alpha4
kind: VirtualMachine
metadata:
  name: my-vm
spec:
  className:    my-vm-class
  imageName:    vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
  bootstrap:
    cloudInit:
      cloudConfig: {}
`

// vmNamed is vm-example under another name, with extra metadata lines (indented by two).
func vmNamed(name, metadata string) string {
	return strings.Replace(strings.Replace(vmExample, "name: my-vm", "name: "+name, 1), "metadata:\n", "metadata:\n"+metadata, 1)
}

// TestPipeline walks issue #3's acceptance: from kubectl apply to a powered-on VM in
// vCenter and back, through every service run as its own role.
func TestPipeline(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("vm-example powers on with the class hardware", func(t *testing.T) {
		tp.apply(vmExample, "")
		tp.waitPower("my-vm", "PoweredOn")
		hw := tp.inVCenter(vc, "my-vm")
		if hw.Config.Hardware.NumCPU != 2 || hw.Config.Hardware.MemoryMB != 4096 || hw.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
			t.Errorf("in vcsim: %d CPUs, %d MB, %s; want 2, 4096, poweredOn", hw.Config.Hardware.NumCPU, hw.Config.Hardware.MemoryMB, hw.Runtime.PowerState)
		}
		// The guest reports no address yet (vcsim's guests report what a test sets): none is
		// shown, not even the one IPAM planned for it.
		if ip := tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.status.network.primaryIP4}"); ip != "" {
			t.Errorf("primaryIP4 %q before the guest reports an address", ip)
		}
		planned := tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.status.network.config.interfaces[0].ip.addresses[0]}")
		ip, _, _ := strings.Cut(planned, "/")
		setGuest(t, tp.vm(vc, "my-vm"), map[string]string{
			"guest.ipAddress": ip, "guest.toolsRunningStatus": "guestToolsRunning", "guest.toolsVersion": "12389",
		})
		tp.eventually("the guest's address reported", func() bool {
			return tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.status.network.primaryIP4}") == ip
		})
		out := tp.kubectl("get", "vm", "-n", "my-namespace", "-o", "wide")
		for _, want := range []string{"PoweredOn", "my-vm-class", "vmi-0a0044d7c690bcbea", ip} {
			if ip == "" || !strings.Contains(out, want) {
				t.Errorf("get vm -o wide lacks %q:\n%s", want, out)
			}
		}
		var conds []struct{ Type, Status, Reason, Message string }
		if err := yaml.Unmarshal([]byte(tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.status.conditions}")), &conds); err != nil {
			t.Fatal(err)
		}
		if len(conds) < 5 {
			t.Errorf("only %d conditions: %+v", len(conds), conds)
		}
		for _, c := range conds {
			if c.Status != "True" {
				t.Errorf("condition %s is %s (%s: %s)", c.Type, c.Status, c.Reason, c.Message)
			}
		}
	})

	t.Run("patch powers off, an out-of-band power-off is corrected", func(t *testing.T) {
		tp.kubectl("patch", "vm", "my-vm", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"powerState":"PoweredOff"}}`)
		tp.eventually("powered off in vcsim", func() bool { return tp.power(vc, "my-vm") == types.VirtualMachinePowerStatePoweredOff })
		tp.kubectl("patch", "vm", "my-vm", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"powerState":"PoweredOn"}}`)
		tp.eventually("powered on again", func() bool { return tp.power(vc, "my-vm") == types.VirtualMachinePowerStatePoweredOn })

		vm := tp.vm(vc, "my-vm")
		task, err := vm.PowerOff(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := task.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		tp.eventually("the out-of-band power-off corrected", func() bool { return tp.power(vc, "my-vm") == types.VirtualMachinePowerStatePoweredOn })
	})

	t.Run("delete destroys the VM and the object disappears", func(t *testing.T) {
		uuid := tp.instanceUUID("my-vm")
		tp.kubectl("delete", "vm", "my-vm", "-n", "my-namespace")
		if _, err := vcenter.FindVM(t.Context(), vc, uuid); !errors.Is(err, vcenter.ErrNotFound) {
			t.Errorf("VM still in vcsim after delete: %v", err)
		}
	})

	t.Run("a power-on check holds the VM off until a privileged user removes it", func(t *testing.T) {
		tp.apply(vmNamed("checked-vm", "  annotations:\n    poweron.check.vmoperator.vmware.com/ad: joining the domain\n"), "user")
		tp.eventually("power-on blocked, naming the check", func() bool {
			got := tp.kubectl("get", "vm", "checked-vm", "-n", "my-namespace", "-o",
				`jsonpath={.status.conditions[?(@.type=="VirtualMachinePowerStateSynced")]['reason','message']}`)
			return strings.HasPrefix(got, "PowerOnBlocked") && strings.Contains(got, `ad=`)
		})
		if p := tp.power(vc, "checked-vm"); p != types.VirtualMachinePowerStatePoweredOff {
			t.Errorf("checked VM is %s in vcsim, want poweredOff", p)
		}
		tp.eventually("a power-on blocked event", func() bool {
			return tp.hasEvent(t, "checked-vm", events.TypeVirtualMachinePowerOnBlocked)
		})
		if out, err := tp.kubectlErr("--context", "user", "annotate", "vm", "checked-vm", "-n", "my-namespace", "poweron.check.vmoperator.vmware.com/ad-"); err == nil {
			t.Errorf("an ordinary user removed a power-on check:\n%s", out)
		}
		tp.kubectl("annotate", "vm", "checked-vm", "-n", "my-namespace", "poweron.check.vmoperator.vmware.com/ad-")
		tp.waitPower("checked-vm", "PoweredOn")
	})

	t.Run("a delete check keeps the VM until it is removed", func(t *testing.T) {
		tp.apply(vmNamed("kept-vm", "  annotations:\n    delete.check.vmoperator.vmware.com/backup: last backup running\n"), "")
		tp.waitPower("kept-vm", "PoweredOn")
		uuid := tp.instanceUUID("kept-vm")
		tp.kubectl("delete", "vm", "kept-vm", "-n", "my-namespace", "--wait=false")
		tp.eventually("placement reports the pending delete check", func() bool {
			return strings.Contains(tp.kubectl("get", "vm", "kept-vm", "-n", "my-namespace", "-o", "jsonpath={.status.conditions}"), "backup")
		})
		if _, err := vcenter.FindVM(t.Context(), vc, uuid); err != nil {
			t.Errorf("VM destroyed while a delete check remains: %v", err)
		}
		tp.kubectl("annotate", "vm", "kept-vm", "-n", "my-namespace", "delete.check.vmoperator.vmware.com/backup-")
		tp.eventually("destroyed and gone", func() bool {
			_, err := tp.kubectlErr("get", "vm", "kept-vm", "-n", "my-namespace")
			_, ferr := vcenter.FindVM(t.Context(), vc, uuid)
			return err != nil && errors.Is(ferr, vcenter.ErrNotFound)
		})
	})

	t.Run("a missing class is reported, and the VM is created once it appears", func(t *testing.T) {
		tp.apply(strings.Replace(vmNamed("late-vm", ""), "my-vm-class", "late-class", 1), "")
		tp.eventually("class condition NotFound", func() bool {
			reason := tp.kubectl("get", "vm", "late-vm", "-n", "my-namespace", "-o",
				`jsonpath={.status.conditions[?(@.type=="VirtualMachineClassReady")].reason}`)
			return reason == "NotFound"
		})
		class := strings.Replace(tp.kubectl("get", "vmclass", "my-vm-class", "-n", "my-namespace", "-o", "yaml"), "name: my-vm-class", "name: late-class", 1)
		class = stripServerFields(class)
		tp.apply(class, "")
		tp.waitPower("late-vm", "PoweredOn")
	})

	t.Run("a missing image is reported, and the VM is created once it appears", func(t *testing.T) {
		// By spec.image: admission resolves an imageName, and refuses one that names nothing
		// (api-rules IMG-4), while the existence of spec.image is a condition (§7.4).
		tp.apply(`apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: late-image-vm
spec:
  className: my-vm-class
  image: {kind: VirtualMachineImage, name: vmi-late}
  storageClass: my-storage-class
`, "")
		tp.eventually("image condition NotFound", func() bool {
			reason := tp.kubectl("get", "vm", "late-image-vm", "-n", "my-namespace", "-o",
				`jsonpath={.status.conditions[?(@.type=="VirtualMachineImageReady")].reason}`)
			return reason == "NotFound"
		})
		image := tp.kubectl("get", "vmi", "vmi-0a0044d7c690bcbea", "-n", "my-namespace", "-o", "yaml")
		image = stripServerFields(strings.Replace(image, "name: vmi-0a0044d7c690bcbea", "name: vmi-late", 1))
		tp.apply(image, "")
		tp.waitPower("late-image-vm", "PoweredOn")
	})

	t.Run("a storage policy vCenter does not know leaves the VM uncreated, and says so", func(t *testing.T) {
		const policy = "00000000-0000-4000-8000-00000000dead"
		tp.apply(`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: unknown-policy
provisioner: csi.vsphere.vmware.com
parameters:
  storagePolicyID: `+policy+"\n", "")
		tp.apply(strings.Replace(vmNamed("unknown-policy-vm", ""), "storageClass: my-storage-class", "storageClass: unknown-policy", 1), "")
		storage := func(field string) string {
			return tp.kubectl("get", "vm", "unknown-policy-vm", "-n", "my-namespace", "-o",
				`jsonpath={.status.conditions[?(@.type=="VirtualMachineStorageReady")].`+field+`}`)
		}
		tp.eventually("storage condition DatastoreNotFound", func() bool { return storage("reason") == "DatastoreNotFound" })
		if msg := storage("message"); !strings.Contains(msg, policy) || !strings.Contains(msg, "not known to vCenter") {
			t.Errorf("VirtualMachineStorageReady message %q does not name the unknown policy %s", msg, policy)
		}
		if n := tp.countVMs(vc, "my-namespace/unknown-policy-vm"); n != 0 {
			t.Errorf("%d VMs in vcsim for a VM whose storage policy is unknown, want 0", n)
		}
		tp.kubectl("delete", "vm", "unknown-policy-vm", "-n", "my-namespace", "--wait=false")
	})

	t.Run("killing placement and power during 20 creations loses and duplicates nothing", func(t *testing.T) {
		var docs []string
		for i := range 20 {
			docs = append(docs, vmNamed(fmt.Sprintf("crash-%02d", i), ""))
		}
		tp.apply(strings.Join(docs, "---\n"), "")
		tp.eventually("some VMs created", func() bool { return tp.countVMs(vc, "my-namespace/crash-") >= 3 })
		tp.stops["placement"]()
		tp.stops["power"]()
		tp.start("placement")
		tp.start("power")
		for i := range 20 {
			tp.waitPower(fmt.Sprintf("crash-%02d", i), "PoweredOn")
		}
		if n := tp.countVMs(vc, "my-namespace/crash-"); n != 20 {
			t.Errorf("%d crash-* VMs in vcsim, want exactly 20", n)
		}
	})
}

// vcenter is the topology's vcsim as its services reach it.
func (tp *topology) vcenter(t *testing.T) vcenter.Endpoint {
	c, err := loadConfig(func(k string) string { return tp.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	e, err := vcenterEndpoint(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// apply sends YAML through kubectl apply as the given context ("" = admin).
func (tp *topology) apply(doc, context string) {
	tp.t.Helper()
	args := []string{"apply", "-n", "my-namespace", "-f", "-"}
	if context != "" {
		args = append([]string{"--context", context}, args...)
	}
	if out, err := tp.kubectlCtx(tp.t.Context(), []byte(doc), args...); err != nil {
		tp.t.Fatalf("apply: %v\n%s", err, out)
	}
}

func (tp *topology) waitPower(name, want string) {
	tp.t.Helper()
	tp.eventually(name+" "+want, func() bool {
		out, _ := tp.kubectlErr("get", "vm", name, "-n", "my-namespace", "-o", "jsonpath={.status.powerState}")
		return out == want
	})
}

func (tp *topology) instanceUUID(name string) string {
	return tp.kubectl("get", "vm", name, "-n", "my-namespace", "-o", "jsonpath={.spec.instanceUUID}")
}

func (tp *topology) vm(vc *govmomi.Client, name string) *object.VirtualMachine {
	tp.t.Helper()
	vm, err := vcenter.FindVM(tp.t.Context(), vc, tp.instanceUUID(name))
	if err != nil {
		tp.t.Fatalf("find %s in vcsim: %v", name, err)
	}
	return vm
}

func (tp *topology) inVCenter(vc *govmomi.Client, name string) mo.VirtualMachine {
	tp.t.Helper()
	var m mo.VirtualMachine
	vm := tp.vm(vc, name)
	if err := vm.Properties(tp.t.Context(), vm.Reference(), []string{"config.hardware", "runtime.powerState"}, &m); err != nil {
		tp.t.Fatal(err)
	}
	return m
}

func (tp *topology) power(vc *govmomi.Client, name string) types.VirtualMachinePowerState {
	return tp.inVCenter(vc, name).Runtime.PowerState
}

// countVMs counts the vCenter VMs whose object key (vcenter.KeyObject) starts with prefix.
func (tp *topology) countVMs(vc *govmomi.Client, prefix string) int {
	tp.t.Helper()
	vms, err := find.NewFinder(vc.Client, true).VirtualMachineList(tp.t.Context(), "/...")
	if err != nil {
		return 0
	}
	n := 0
	for _, vm := range vms {
		var m mo.VirtualMachine
		if err := vm.Properties(tp.t.Context(), vm.Reference(), []string{"config.extraConfig"}, &m); err != nil || m.Config == nil {
			continue
		}
		for _, opt := range m.Config.ExtraConfig {
			if kv := opt.GetOptionValue(); kv.Key == vcenter.KeyObject && strings.HasPrefix(fmt.Sprint(kv.Value), prefix) {
				n++
			}
		}
	}
	return n
}

// hasEvent reports whether EVENTS holds an event of type typ about the VM, as an outside
// system reads it: with the events credentials, from the events account's mirror.
func (tp *topology) hasEvent(t *testing.T, name, typ string) bool {
	_, js := natsAs(t, tp.env["VMOP_NATS_URL"], tp.data, eventsIdentity)
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: name}
	s, err := js.Stream(context.Background(), events.StreamEvents)
	if err != nil {
		return false
	}
	_, err = s.GetLastMsgForSubject(context.Background(), events.EventSubject(ref, typ))
	return err == nil
}

// stripServerFields removes what the server sets, so a fetched object can be applied as new.
func stripServerFields(doc string) string {
	var keep []string
	for _, line := range strings.Split(doc, "\n") {
		switch strings.TrimSpace(strings.SplitN(line, ":", 2)[0]) {
		case "uid", "resourceVersion", "creationTimestamp", "generation", "kubectl.kubernetes.io/last-applied-configuration":
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// setGuest makes vcsim's guest of vm report the given properties (the simulator's
// SET.<property path> ExtraConfig keys), as VMware Tools in a real guest would.
func setGuest(t *testing.T, vm *object.VirtualMachine, props map[string]string) {
	t.Helper()
	var spec types.VirtualMachineConfigSpec
	for k, v := range props {
		spec.ExtraConfig = append(spec.ExtraConfig, &types.OptionValue{Key: "SET." + k, Value: v})
	}
	task, err := vm.Reconfigure(t.Context(), spec)
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatalf("set the guest of %s: %v", vm.Reference().Value, err)
	}
}
