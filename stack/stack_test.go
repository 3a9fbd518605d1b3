package main

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events/eventstest"
)

// stack is `vmop all` running in this test process on free ports.
type stack struct {
	t          *testing.T
	kubeconfig string
	data       string
	natsURL    string // the embedded NATS, as outside systems reach it
	stop       func() // stops the stack and waits for it (also done at cleanup)
}

// startStack runs the whole stack and waits until kubectl sees the seeded inventory.
func startStack(t *testing.T) *stack {
	t.Helper()
	return startStackWith(t, nil)
}

// startStackWith is startStack with more settings.
func startStackWith(t *testing.T, settings map[string]string) *stack {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Fatalf("kubectl is required for the end-to-end tests: %v", err)
	}
	data := t.TempDir()
	env := map[string]string{
		"VMOP_DATA":       data,
		"VMOP_ADDR":       eventstest.FreeAddr(t),
		"VMOP_NATS_ADDR":  eventstest.FreeAddr(t),
		"VMOP_VCSIM_ADDR": "127.0.0.1:0",
		"VMOP_GUEST_POLL": "1s", // tests change vcsim's guests and wait for what they report
	}
	maps.Copy(env, settings)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, "all", func(k string) string { return env[k] }) }()
	stop := sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("stack: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("stack did not stop within 30s")
		}
	})
	t.Cleanup(stop)
	data = env["VMOP_DATA"] // a restart runs on the data of the stack before
	s := &stack{t: t, kubeconfig: filepath.Join(data, "kubeconfig"), data: data, natsURL: "nats://" + env["VMOP_NATS_ADDR"], stop: stop}
	s.eventually("gateway serving the seeded inventory", s.ready)
	return s
}

// ready reports whether the gateway kubectl reaches is ready: caught up with the streams
// and serving the whole seeded inventory.
func (s *stack) ready() bool {
	if _, err := os.Stat(s.kubeconfig); err != nil {
		return false
	}
	out, err := s.kubectlErr("get", "--raw", "/readyz")
	return err == nil && out == "ok"
}

func (s *stack) kubectlErr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return s.kubectlCtx(ctx, nil, args...)
}

func (s *stack) kubectlCtx(ctx context.Context, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", s.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+s.data) // a private kubectl cache per test
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kubectl runs kubectl and fails the test when it fails.
func (s *stack) kubectl(args ...string) string {
	s.t.Helper()
	out, err := s.kubectlErr(args...)
	if err != nil {
		s.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (s *stack) eventually(what string, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // poll interval of a condition with a deadline
	}
}
