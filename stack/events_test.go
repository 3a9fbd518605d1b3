package main

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestKubectlEvents walks issue #12's acceptance for Events with the real kubectl: describe
// lists a VM's events (created, powered on), kubectl get events -w shows a power-off as it
// happens, kubectl get events prints the usual columns, describe vmg|pvc have their Events
// section.
func TestKubectlEvents(t *testing.T) {
	s := startStack(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	watch := exec.CommandContext(ctx, "kubectl", "--kubeconfig", s.kubeconfig, "get", "events", "-n", "my-namespace", "-w")
	watch.Env = append(watch.Environ(), "HOME="+s.data)
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	if out, err := s.kubectlCtx(ctx, []byte(vmExample), "apply", "-n", "my-namespace", "-f", "-"); err != nil {
		t.Fatalf("apply vm-example: %v\n%s", err, out)
	}
	s.eventually("my-vm powered on", func() bool {
		out, err := s.kubectlErr("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.status.powerState}")
		return err == nil && out == "PoweredOn"
	})

	// describe asks for the VM's events by involvedObject (kind, name, namespace, uid).
	created := regexp.MustCompile(`(?m)^\s+Normal\s+Created\s+\S+\s+vmop-api\s+Created`)
	poweredOn := regexp.MustCompile(`(?m)^\s+Normal\s+PoweredOn\s+\S+\s+vmop-power\s+Powered on, was PoweredOff`)
	var describe string
	s.eventually("describe vm lists Created and PoweredOn", func() bool {
		describe = s.kubectl("describe", "vm", "my-vm", "-n", "my-namespace")
		return created.MatchString(describe) && poweredOn.MatchString(describe)
	})
	if events := describe[strings.Index(describe, "\nEvents:"):]; !strings.Contains(events, "Type") || !strings.Contains(events, "From") {
		t.Errorf("describe's Events section:\n%s", events)
	}

	// A VM without a readiness probe: nothing says whether it is ready, its READY is blank.
	out := s.kubectl("get", "vm", "my-vm", "-n", "my-namespace")
	rows := strings.Split(out, "\n")
	at := strings.Index(rows[0], "READY")
	if len(rows) < 2 || at < 0 || len(rows[1]) < at+len("READY") || strings.TrimSpace(rows[1][at:at+len("READY")]) != "" {
		t.Errorf("kubectl get vm without a probe: want a blank READY cell:\n%s", out)
	}
	s.kubectl("patch", "vm", "my-vm", "-n", "my-namespace", "--type", "merge", "-p", `{"spec":{"powerState":"PoweredOff"}}`)
	deadline := time.After(60 * time.Second)
	for seen := false; !seen; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("kubectl get events -w ended before the power-off")
			}
			seen = strings.Contains(l, "PoweredOff") && strings.Contains(l, "virtualmachine/my-vm")
		case <-deadline:
			t.Fatal("kubectl get events -w did not show the power-off within 60s")
		}
	}

	out = s.kubectl("get", "events", "-n", "my-namespace")
	if header := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(header, " ") != "LAST SEEN TYPE REASON OBJECT MESSAGE" {
		t.Errorf("kubectl get events header %q:\n%s", header, out)
	}
	if out := s.kubectl("get", "ev", "-n", "my-namespace", "--field-selector", "reason=PoweredOff"); !strings.Contains(out, "virtualmachine/my-vm") {
		t.Errorf("kubectl get ev --field-selector reason=PoweredOff:\n%s", out)
	}
	if out := s.kubectl("events", "-n", "my-namespace", "--for", "vm/my-vm", "--types", "Normal"); !strings.Contains(out, "PoweredOff") || !strings.Contains(out, "Created") {
		t.Errorf("kubectl events --for vm/my-vm:\n%s", out)
	}

	// describe vmg and pvc ask for their events too (the PVC's in protobuf, by its typed describer).
	const others = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineGroup
metadata:
  name: ev-group
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ev-claim
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: my-storage-class
  resources:
    requests:
      storage: 1Gi
`
	if out, err := s.kubectlCtx(ctx, []byte(others), "apply", "-n", "my-namespace", "-f", "-"); err != nil {
		t.Fatalf("apply a group and a claim: %v\n%s", err, out)
	}
	for _, what := range []string{"vmg/ev-group", "pvc/ev-claim"} {
		if out := s.kubectl("describe", what, "-n", "my-namespace"); !regexp.MustCompile(`(?m)^Events:`).MatchString(out) {
			t.Errorf("describe %s has no Events section:\n%s", what, out)
		}
	}
	if out, err := s.kubectlErr("--context", "user", "get", "events", "-n", "kube-system"); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("user listing kube-system's events: err=%v\n%s", err, out)
	}
}
