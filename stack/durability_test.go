package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// childEnv makes this test binary run as the vmop binary itself (see TestMain), so the
// durability test can kill a whole stack process without killing the test.
const childEnv = "VMOP_TEST_RUN_AS_VMOP"

const classesPath = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachineclasses"

// The whole stack is killed with SIGKILL right after its 100th acknowledged write and
// started again on the same data: every acknowledged write is there, and the read model
// (resumed, not rebuilt) equals one folded from nothing out of the same streams.
func TestSIGKILLKeepsEveryAcknowledgedWrite(t *testing.T) {
	data := t.TempDir()
	env := []string{
		"VMOP_DATA=" + data,
		"VMOP_ADDR=" + eventstest.FreeAddr(t),
		"VMOP_NATS_ADDR=" + eventstest.FreeAddr(t),
		"VMOP_VCSIM_ADDR=127.0.0.1:0",
	}
	vmop := startVmopProcess(t, data, env)

	// 100 writes, each answered 2xx: 40 classes created, each updated, every other one
	// deleted (its SPECS history rolled up to the tombstone).
	type want struct {
		exists bool
		label  string
	}
	wants := map[string]want{}
	writes := 0
	write := func(method, path string, body []byte, ok int) {
		t.Helper()
		code, answer, err := vmop.api.doAs(method, path, body, contentType(method))
		if err != nil || code != ok {
			t.Fatalf("%s %s: %d %s %v", method, path, code, answer, err)
		}
		writes++
	}
	for i := range 40 {
		name := fmt.Sprintf("durable-%02d", i)
		write("POST", classesPath, durableClass(name), http.StatusCreated)
		wants[name] = want{exists: true}
		label := fmt.Sprintf("update-%d", i)
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{"durability":%q}}}`, label)
		write("PATCH", classesPath+"/"+name, patch, http.StatusOK)
		wants[name] = want{exists: true, label: label}
		if i%2 == 0 {
			write("DELETE", classesPath+"/"+name, nil, http.StatusOK)
			wants[name] = want{}
		}
	}
	vmop.kill()
	if writes != 100 {
		t.Fatalf("%d acknowledged writes, want 100", writes)
	}
	epoch := readModelEpoch(t, data)

	vmop = startVmopProcess(t, data, env)
	for name, w := range wants {
		code, body, err := vmop.api.do("GET", classesPath+"/"+name, nil)
		switch {
		case err != nil:
			t.Fatalf("GET %s: %v", name, err)
		case !w.exists && code != http.StatusNotFound:
			t.Errorf("GET deleted %s after the restart: %d %s, want 404", name, code, body)
		case w.exists && code != http.StatusOK:
			t.Errorf("GET %s after the restart: %d %s, want 200", name, code, body)
		case w.exists:
			var c struct {
				Metadata struct{ Labels map[string]string }
			}
			if err := json.Unmarshal(body, &c); err != nil || c.Metadata.Labels["durability"] != w.label {
				t.Errorf("%s after the restart has labels %v (%v), want durability=%s", name, c.Metadata.Labels, err, w.label)
			}
		}
	}
	vmop.kill()

	compareWithFreshReadModel(t, data, epoch)
}

func contentType(method string) string {
	if method == "PATCH" {
		return "application/merge-patch+json"
	}
	return "application/json"
}

// doAs sends one request with the given content type and returns the status code and body.
func (c *apiClient) doAs(method, path string, body []byte, contentType string) (int, []byte, error) {
	req, err := http.NewRequest(method, c.server+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", contentType)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

func durableClass(name string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachineClass",
		"metadata":{"name":%q},"spec":{"hardware":{"cpus":1,"memory":"1Gi"}}}`, name)
}

// vmopProcess is the stack running as a child process in its own process group.
type vmopProcess struct {
	t   *testing.T
	cmd *exec.Cmd
	api *apiClient
	log string // its stdout and stderr
}

// startVmopProcess starts `vmop all` and waits until its API serves the seeded inventory,
// talking to it only through what the stack writes to VMOP_DATA (the kubeconfig).
func startVmopProcess(t *testing.T, data string, env []string) *vmopProcess {
	t.Helper()
	logFile, err := os.OpenFile(filepath.Join(t.TempDir(), "vmop.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &vmopProcess{t: t, cmd: cmd, log: logFile.Name()}
	t.Cleanup(p.kill)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if p.api == nil {
			p.api, _ = newAPIClient(filepath.Join(data, "kubeconfig"), 1)
		}
		if p.api != nil && p.api.ready() {
			return p
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("vmop did not serve the seeded inventory within 2m; its log:\n%s", log)
		}
		time.Sleep(50 * time.Millisecond) // poll interval of a condition with a deadline
	}
}

// kill sends SIGKILL to the whole process group and reaps the process (idempotent).
func (p *vmopProcess) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		p.t.Errorf("kill vmop: %v", err)
	}
	_ = p.cmd.Wait() // "signal: killed"
}

// readModelEpoch reads the epoch of the read model the killed stack left behind.
func readModelEpoch(t *testing.T, data string) string {
	t.Helper()
	rm, err := readmodel.Open(filepath.Join(data, "api", "readmodel.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Close()
	return rm.Epoch()
}

// compareWithFreshReadModel folds the streams of the stopped stack into the read model it
// left (which must resume in its epoch, not rebuild) and into a new one, and compares every
// object of every kind, resourceVersions included.
func compareWithFreshReadModel(t *testing.T, data, epoch string) {
	t.Helper()
	ns, err := startNATS(t.Context(), config{Data: data, NATSAddr: eventstest.FreeAddr(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	// A SIGKILL keeps what the kernel was given; a power loss keeps only what was synced.
	if !ns.JetStreamConfig().SyncAlways {
		t.Error("the embedded JetStream does not sync every write to disk")
	}
	_, js, err := connect("", ns.Server, "api", natsLogin{Creds: ns.auth.credsFile("api")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	fold := func(path string) *readmodel.Store {
		t.Helper()
		rm, err := readmodel.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		foldCtx, stop := context.WithCancel(ctx)
		go func() { done <- rm.Fold(foldCtx, js) }()
		t.Cleanup(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("fold %s: %v", path, err)
			}
			rm.Close()
		})
		if err := rm.WaitCaughtUp(ctx); err != nil {
			t.Fatalf("fold %s: %v", path, err)
		}
		return rm
	}
	kept := fold(filepath.Join(data, "api", "readmodel.db"))
	fresh := fold(filepath.Join(t.TempDir(), "fresh.db"))
	if kept.Epoch() != epoch {
		t.Errorf("the read model was rebuilt (epoch %s, was %s): it should have resumed", kept.Epoch(), epoch)
	}
	if kept.RV() != fresh.RV() {
		t.Errorf("read model at %s, a fresh one at %s", kept.RV(), fresh.RV())
	}
	objects := 0
	for _, k := range model.Kinds() {
		want, err := fresh.List(readmodel.ListOptions{Plural: k.Plural})
		if err != nil {
			t.Fatal(err)
		}
		got, err := kept.List(readmodel.ListOptions{Plural: k.Plural})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Items, got.Items); diff != "" {
			t.Errorf("%s: read model differs from a fresh rebuild (-fresh +kept):\n%s", k.Plural, diff)
		}
		objects += len(want.Items)
	}
	if objects < 20 {
		t.Errorf("compared %d objects, want at least the 20 classes kept", objects)
	}
}
