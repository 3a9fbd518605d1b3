package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

var vmopVariable = regexp.MustCompile(`VMOP_[A-Z][A-Z_]*[A-Z]`)

// variablesInCode are the VMOP_* names the repository's Go code mentions (tests aside).
func variablesInCode(t *testing.T) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		names = append(names, vmopVariable.FindAllString(string(src), -1)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// `vmop --help` exits 0 and documents every VMOP_* variable the code reads, each of which
// is in the settings table and in README's.
func TestHelpDocumentsEverySetting(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := cli(context.Background(), []string{"--help"}, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("vmop --help exited %d: %s", code, stderr.String())
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	inCode := variablesInCode(t)
	if len(inCode) < 20 {
		t.Fatalf("found only %v in the code", inCode)
	}
	for _, name := range inCode {
		if !slices.ContainsFunc(settings, func(s setting) bool { return s.Env == name }) {
			t.Errorf("%s is used in the code but not in the settings table", name)
		}
	}
	for _, s := range settings {
		if !strings.Contains(stdout.String(), s.Env) {
			t.Errorf("vmop --help does not document %s", s.Env)
		}
		if !s.NoFlag && !strings.Contains(stdout.String(), "--"+flagName(s.Env)+", "+s.Env) {
			t.Errorf("vmop --help does not name the flag of %s", s.Env)
		}
		if !strings.Contains(string(readme), "`"+s.Env+"`") {
			t.Errorf("README's settings table does not list %s", s.Env)
		}
	}
	for _, r := range roles {
		if _, ok := roleFor(r.name); !ok {
			t.Errorf("--help lists role %q that vmop does not run", r.name)
		}
	}
}

// A flag overrides its variable; a secret has no flag; a command may stand before or
// after the flags.
func TestFlagsOverrideTheEnvironment(t *testing.T) {
	env := map[string]string{"VMOP_ADDR": "127.0.0.1:1", "VMOP_DATA": "/from/env"}
	for _, args := range [][]string{{"api", "--addr=127.0.0.1:2"}, {"--addr", "127.0.0.1:2", "api"}} {
		cmd, _, getenv, err := parseArgs(args, func(k string) string { return env[k] }, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		c, err := loadConfig(getenv)
		if err != nil {
			t.Fatal(err)
		}
		if cmd != "api" || c.Addr != "127.0.0.1:2" || c.Data != "/from/env" {
			t.Errorf("%v: got role %q, addr %q, data %q", args, cmd, c.Addr, c.Data)
		}
	}
	if _, _, _, err := parseArgs([]string{"--vcenter-password=x"}, os.Getenv, &bytes.Buffer{}); err == nil {
		t.Error("--vcenter-password is accepted: a password on the command line is visible to every user")
	}
	if _, _, _, err := parseArgs([]string{"api", "power"}, os.Getenv, &bytes.Buffer{}); err == nil {
		t.Error("two roles are accepted")
	}
	var stdout bytes.Buffer
	if code := cli(context.Background(), []string{"version"}, os.Getenv, &stdout, &bytes.Buffer{}); code != 0 || !strings.HasPrefix(stdout.String(), "vmop ") {
		t.Errorf("vmop version exited %d: %q", code, stdout.String())
	}
}

// VMOP_LOG_FORMAT=json logs JSON lines carrying the trace and span of a traced context.
func TestJSONLogsCarryTheTrace(t *testing.T) {
	var out bytes.Buffer
	log, err := newLogger(&out, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled,
	}))
	log.With("role", "api").InfoContext(ctx, "traced")
	log.Debug("below the level")
	log.Info("untraced")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", lines)
	}
	var traced, untraced map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &traced); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &untraced); err != nil {
		t.Fatal(err)
	}
	if traced["trace_id"] != tid.String() || traced["span_id"] != sid.String() || traced["role"] != "api" {
		t.Errorf("traced line: %v", traced)
	}
	if _, ok := untraced["trace_id"]; ok {
		t.Errorf("untraced line has a trace: %v", untraced)
	}
	for _, bad := range [][2]string{{"xml", "info"}, {"text", "loud"}} {
		if _, err := newLogger(&out, bad[0], bad[1]); err == nil {
			t.Errorf("format %q level %q accepted", bad[0], bad[1])
		}
	}
}
