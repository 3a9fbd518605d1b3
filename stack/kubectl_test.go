package main

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

const myVMClass = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineClass
metadata:
  name: e2e-class
spec:
  configSpec:
    _typeName: VirtualMachineConfigSpec
    cpuAllocation:
      _typeName: ResourceAllocationInfo
      limit: 400
      reservation: 200
  hardware:
    cpus: 2
    memory: 4Gi
`

// TestKubectl walks issue #2's acceptance with the real kubectl against `make run`'s stack.
func TestKubectl(t *testing.T) {
	s := startStack(t)

	t.Run("api-resources lists kinds and short names", func(t *testing.T) {
		out := s.kubectl("api-resources")
		for _, want := range []string{"virtualmachines", "vm ", "vmclass", "vmi", "cvmi", "vmg", "encryptionclasses", "storageclasses", "persistentvolumeclaims"} {
			if !strings.Contains(out, want) {
				t.Errorf("api-resources lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("seeded inventory", func(t *testing.T) {
		out := s.kubectl("get", "vmclass,vmi,cvmi", "-A")
		for _, want := range []string{"my-vm-class", "vmi-0a0044d7c690bcbea"} {
			if !strings.Contains(out, want) {
				t.Errorf("get vmclass,vmi,cvmi -A lacks %s:\n%s", want, out)
			}
		}
		if out := s.kubectl("get", "storageclass"); !strings.Contains(out, "my-storage-class") || !strings.Contains(out, "my-encrypted-storage-class") {
			t.Errorf("get storageclass:\n%s", out)
		}
		if out := s.kubectl("get", "encryptionclass", "-n", "my-namespace"); !strings.Contains(out, "my-encryption-class") {
			t.Errorf("get encryptionclass:\n%s", out)
		}
	})

	t.Run("explain", func(t *testing.T) {
		out := s.kubectl("explain", "vm.spec.powerState")
		if !strings.Contains(out, "powerState") || !strings.Contains(strings.ToLower(out), "power") || !strings.Contains(out, "DESCRIPTION") {
			t.Errorf("explain vm.spec.powerState:\n%s", out)
		}
	})

	t.Run("apply, get, patch, watch, delete", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		watch := exec.CommandContext(ctx, "kubectl", "--kubeconfig", s.kubeconfig, "get", "vmclass", "-n", "my-namespace", "-w", "--output-watch-events")
		watch.Env = append(watch.Environ(), "HOME="+s.data)
		stdout, err := watch.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := watch.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()

		out, err := s.kubectlCtx(ctx, []byte(myVMClass), "apply", "-n", "my-namespace", "-f", "-")
		if err != nil || !strings.Contains(out, "created") {
			t.Fatalf("apply: %v\n%s", err, out)
		}
		out, err = s.kubectlCtx(ctx, []byte(myVMClass), "apply", "-n", "my-namespace", "-f", "-")
		if err != nil || !strings.Contains(out, "unchanged") {
			t.Fatalf("apply again: %v\n%s", err, out)
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(s.kubectl("get", "vmclass", "e2e-class", "-n", "my-namespace", "-o", "yaml")), &obj); err != nil {
			t.Fatal(err)
		}
		meta := obj["metadata"].(map[string]any)
		for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp"} {
			if meta[f] == nil {
				t.Errorf("get -o yaml lacks metadata.%s", f)
			}
		}
		s.kubectl("patch", "vmclass", "e2e-class", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"description":"merged"}}`)
		s.kubectl("patch", "vmclass", "e2e-class", "-n", "my-namespace", "--type", "json", "-p", `[{"op":"replace","path":"/spec/hardware/cpus","value":4}]`)
		if out := s.kubectl("get", "vmclass", "e2e-class", "-n", "my-namespace", "-o", "jsonpath={.spec.description}/{.spec.hardware.cpus}"); out != "merged/4" {
			t.Errorf("after patches: %q, want merged/4", out)
		}
		s.kubectl("delete", "vmclass", "e2e-class", "-n", "my-namespace")
		if _, err := s.kubectlErr("get", "vmclass", "e2e-class", "-n", "my-namespace"); err == nil {
			t.Errorf("e2e-class still exists after delete")
		}

		want := []string{"ADDED", "MODIFIED", "DELETED"}
		deadline := time.After(30 * time.Second)
		for len(want) > 0 {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("watch ended; still waiting for %v", want)
				}
				if strings.Contains(l, "e2e-class") && strings.HasPrefix(l, want[0]) {
					want = want[1:]
				}
			case <-deadline:
				t.Fatalf("watch did not show %v", want)
			}
		}
	})

	t.Run("v1alpha4: apply upstream vm-example, get, explain", func(t *testing.T) {
		doc := []byte(strings.Replace(vmExample, "name: my-vm", "name: v1a4-vm", 1))
		for _, want := range []string{"created", "unchanged"} {
			out, err := s.kubectlCtx(t.Context(), doc, "apply", "-n", "my-namespace", "-f", "-")
			if err != nil || !strings.Contains(out, want) {
				t.Fatalf("apply v1alpha4 (want %s): %v\n%s", want, err, out)
			}
		}
		// kubectl keeps the version of a full resource name; a short name (vm.v1alpha4.…) is
		// expanded to its group and read in the preferred version, as with any API server.
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(s.kubectl("get", "virtualmachines.v1alpha4.vmoperator.vmware.com", "v1a4-vm", "-n", "my-namespace", "-o", "yaml")), &obj); err != nil {
			t.Fatal(err)
		}
		spec, _ := obj["spec"].(map[string]any)
		if obj["apiVersion"] != "vmoperator.vmware.com/v1alpha4" || spec["hardware"] != nil || spec["className"] != "my-vm-class" {
			t.Errorf("get virtualmachines.v1alpha4: apiVersion %v, spec %v", obj["apiVersion"], spec)
		}
		if out := s.kubectl("get", "vm.v1alpha4.vmoperator.vmware.com", "-n", "my-namespace"); !strings.Contains(out, "v1a4-vm") {
			t.Errorf("get vm.v1alpha4.vmoperator.vmware.com:\n%s", out)
		}
		if out := s.kubectl("get", "vm", "v1a4-vm", "-n", "my-namespace", "-o", "jsonpath={.apiVersion}"); out != "vmoperator.vmware.com/v1alpha5" {
			t.Errorf("get vm (preferred version) apiVersion = %q", out)
		}
		s.kubectl("patch", "virtualmachines.v1alpha4.vmoperator.vmware.com", "v1a4-vm", "-n", "my-namespace", "--type", "merge", "-p", `{"metadata":{"labels":{"tier":"web"}}}`)
		if out := s.kubectl("get", "vm", "v1a4-vm", "-n", "my-namespace", "-o", "jsonpath={.metadata.labels.tier}"); out != "web" {
			t.Errorf("label after a v1alpha4 patch = %q", out)
		}
		out := s.kubectl("explain", "vm.spec.cdrom", "--api-version", "vmoperator.vmware.com/v1alpha4")
		if !strings.Contains(out, "VERSION:    v1alpha4") || !strings.Contains(out, "cdrom") {
			t.Errorf("explain vm.spec.cdrom --api-version v1alpha4:\n%s", out)
		}
		s.kubectl("delete", "virtualmachines.v1alpha4.vmoperator.vmware.com", "v1a4-vm", "-n", "my-namespace", "--wait=false")
	})

	t.Run("ordinary user", func(t *testing.T) {
		out, err := s.kubectlErr("--context", "user", "get", "vm", "-n", "kube-system")
		if err == nil || !strings.Contains(out, "Forbidden") {
			t.Errorf("user listing kube-system: err=%v\n%s", err, out)
		}
		if _, err := s.kubectlErr("--context", "user", "get", "vm", "-n", "my-namespace"); err != nil {
			t.Errorf("user listing my-namespace: %v", err)
		}
	})
}
