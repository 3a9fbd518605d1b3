package main

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// admissionVM is a VirtualMachine of the seeded inventory; meta and spec are extra YAML
// lines under metadata and spec (two-space indented).
func admissionVM(name, meta, spec string) string {
	return `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: ` + name + `
  namespace: my-namespace
` + meta + `spec:
  className: my-vm-class
  imageName: vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
` + spec
}

// as runs kubectl in namespace my-namespace as who (a kubeconfig context: "admin" or
// "user"), with an optional manifest on stdin.
func (s *stack) as(who, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var in []byte
	if stdin != "" {
		in = []byte(stdin)
	}
	return s.kubectlCtx(ctx, in, append([]string{"--context", who, "-n", "my-namespace"}, args...)...)
}

// must is as, failing t when kubectl fails.
func (s *stack) must(t *testing.T, who, stdin string, args ...string) string {
	t.Helper()
	out, err := s.as(who, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s as %s: %v\n%s", strings.Join(args, " "), who, err, out)
	}
	return out
}

// TestKubectlAdmission runs a sample of admission rules through the real kubectl, as the
// privileged admin and as the ordinary user: denials reach the user with their HTTP
// reason and field errors in kubectl's rendering, and what is refused is not stored.
func TestKubectlAdmission(t *testing.T) {
	s := startStack(t)
	if out, err := s.as("user", admissionVM("adm-vm", "", ""), "apply", "-f", "-"); err != nil {
		t.Fatalf("user applies a valid VM: %v\n%s", err, out)
	}

	tests := []struct {
		name, context, stdin string
		args                 []string
		wantErr              bool
		code                 string   // HTTP status of the refused write, from kubectl -v=6
		want                 []string // substrings of kubectl's output
		absent, present      string   // a VM that must not / must exist afterwards
	}{
		{"D8 non-privileged biosUUID is 403", "user",
			admissionVM("adm-bios", "", "  biosUUID: 1b1e1a2c-4e59-4b7b-a9f1-0f6b5a0c9d11\n"), []string{"apply", "-f", "-"},
			true, "403 Forbidden", []string{"spec.biosUUID: Forbidden"}, "adm-bios", ""},
		{"D8 privileged biosUUID is kept", "admin",
			admissionVM("adm-bios", "", "  biosUUID: 1b1e1a2c-4e59-4b7b-a9f1-0f6b5a0c9d11\n"),
			[]string{"apply", "--dry-run=server", "-f", "-", "-o", "jsonpath={.spec.biosUUID}"},
			false, "", []string{"1b1e1a2c-4e59-4b7b-a9f1-0f6b5a0c9d11"}, "adm-bios", ""},
		{"422 lists every field error in one message", "user",
			admissionVM("adm-invalid", "", "  powerState: Suspended\n  nextRestartTime: now\n  network:\n    nameservers: [not-an-ip]\n"),
			[]string{"apply", "-f", "-"}, true, "422 Unprocessable Entity",
			[]string{"is invalid", `spec.powerState: Invalid value: "Suspended"`, "spec.nextRestartTime: Invalid value", "spec.network.nameservers[0]: Invalid value"},
			"adm-invalid", ""},
		{"PWR-1 Suspended on create", "admin",
			admissionVM("adm-suspended", "", "  powerState: Suspended\n"), []string{"apply", "-f", "-"},
			true, "422 Unprocessable Entity", []string{`spec.powerState: Invalid value: "Suspended"`}, "adm-suspended", ""},
		{"IMM-1 imageName is immutable", "user", "",
			[]string{"patch", "vm", "adm-vm", "--type", "merge", "-p", `{"spec":{"imageName":"photonos-5-x64"}}`},
			true, "422 Unprocessable Entity", []string{"spec.imageName: Invalid value"}, "", ""},
		{"ANN-1 privileged-only annotation refused to the user", "user", "",
			[]string{"annotate", "vm", "adm-vm", "vmoperator.vmware.com/restored-vm=yes"},
			true, "422 Unprocessable Entity", []string{"metadata.annotations[vmoperator.vmware.com/restored-vm]: Forbidden"}, "", ""},
		{"ANN-1 privileged-only annotation allowed to the admin", "admin", "",
			[]string{"annotate", "vm", "adm-vm", "vmoperator.vmware.com/restored-vm=yes"},
			false, "", []string{"annotated"}, "", ""},
		{"dry run shows the defaulted object", "user", admissionVM("adm-dry", "", ""),
			[]string{"apply", "--dry-run=server", "-f", "-", "-o", "jsonpath={.spec.powerState}/{.spec.image.kind}"},
			false, "", []string{"PoweredOn/VirtualMachineImage"}, "adm-dry", ""},
		{"dry-run delete keeps the object", "user", "",
			[]string{"delete", "vm", "adm-vm", "--dry-run=server"}, false, "", []string{"deleted (server dry run)"}, "", "adm-vm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if tt.code != "" {
				args = append(slices.Clip(args), "-v=6")
			}
			out, err := s.as(tt.context, tt.stdin, args...)
			if (err != nil) != tt.wantErr {
				t.Fatalf("kubectl %s as %s: err = %v, want error %v\n%s", strings.Join(tt.args, " "), tt.context, err, tt.wantErr, out)
			}
			if tt.code != "" && !regexp.MustCompile(`(POST|PUT|PATCH) \S+ `+tt.code+` in `).MatchString(out) {
				t.Errorf("kubectl -v=6 shows no response with status %s:\n%s", tt.code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tt.absent != "" {
				if out, err := s.as("admin", "", "get", "vm", tt.absent, "-o", "name"); err == nil || !strings.Contains(out, "NotFound") {
					t.Errorf("%s exists after a refused or dry-run request: %v\n%s", tt.absent, err, out)
				}
			}
			if tt.present != "" {
				if out, err := s.as("admin", "", "get", "vm", tt.present, "-o", "jsonpath={.metadata.deletionTimestamp}"); err != nil || out != "" {
					t.Errorf("%s is gone or being deleted after a dry-run delete: %v\n%s", tt.present, err, out)
				}
			}
		})
	}

	t.Run("re-apply after server-side changes is accepted", func(t *testing.T) {
		before := s.must(t, "admin", "", "get", "vm", "adm-vm", "-o", "jsonpath={.metadata.generation}")
		out, err := s.as("user", admissionVM("adm-vm", "", ""), "apply", "-f", "-")
		if err != nil || !strings.Contains(out, "unchanged") {
			t.Fatalf("re-apply of the same manifest: %v\n%s", err, out)
		}
		s.must(t, "admin", "", "patch", "vm", "adm-vm", "--type", "merge", "-p", `{"metadata":{"labels":{"team":"blue"}},"spec":{"powerState":"PoweredOff"}}`)
		out, err = s.as("user", admissionVM("adm-vm", "", ""), "apply", "-f", "-")
		if err != nil {
			t.Fatalf("re-apply after a server-side patch: %v\n%s", err, out)
		}
		after := s.must(t, "admin", "", "get", "vm", "adm-vm", "-o", "jsonpath={.metadata.generation}/{.spec.powerState}")
		if want := generationPlus(t, before, 1) + "/PoweredOff"; after != want {
			t.Errorf("after patch and re-apply: generation/powerState = %s, want %s (the re-apply changes nothing)", after, want)
		}
		// The object exactly as the server returns it goes back through replace unchanged.
		current := s.must(t, "user", "", "get", "vm", "adm-vm", "-o", "yaml")
		if out, err := s.as("user", current, "replace", "-f", "-"); err != nil {
			t.Fatalf("replace with the GET body: %v\n%s", err, out)
		}
		if again := s.must(t, "admin", "", "get", "vm", "adm-vm", "-o", "jsonpath={.metadata.generation}/{.spec.powerState}"); again != after {
			t.Errorf("replace with the GET body changed the object: %s, was %s", again, after)
		}
	})
}

// generationPlus adds n to a metadata.generation printed by kubectl.
func generationPlus(t *testing.T, gen string, n int) string {
	t.Helper()
	g, err := strconv.Atoi(gen)
	if err != nil {
		t.Fatalf("generation %q: %v", gen, err)
	}
	return strconv.Itoa(g + n)
}
