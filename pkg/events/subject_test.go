package events_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/vmop/vmop/pkg/events"
)

func TestSubjects(t *testing.T) {
	tests := []struct {
		name                   string
		ref                    events.Ref
		spec, status, event    string
		specFilter, statFilter string
	}{
		{
			name:       "namespaced",
			ref:        events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "my-vm"},
			spec:       "vmop.spec.virtualmachines.default.my-vm",
			status:     "vmop.status.virtualmachines.default.my-vm.power",
			event:      "vmop.events.virtualmachines.default.my-vm.poweredon",
			specFilter: "vmop.spec.virtualmachines.*.*",
			statFilter: "vmop.status.virtualmachines.*.*.*",
		},
		{
			name:       "dotted name",
			ref:        events.Ref{Plural: "virtualmachines", Namespace: "ns-1", Name: "web.example.com"},
			spec:       "vmop.spec.virtualmachines.ns-1.web_example_com",
			status:     "vmop.status.virtualmachines.ns-1.web_example_com.power",
			event:      "vmop.events.virtualmachines.ns-1.web_example_com.poweredon",
			specFilter: "vmop.spec.virtualmachines.*.*",
			statFilter: "vmop.status.virtualmachines.*.*.*",
		},
		{
			name:       "cluster scope",
			ref:        events.Ref{Plural: "storageclasses", Name: "gold.fast"},
			spec:       "vmop.spec.storageclasses._.gold_fast",
			status:     "vmop.status.storageclasses._.gold_fast.power",
			event:      "vmop.events.storageclasses._.gold_fast.poweredon",
			specFilter: "vmop.spec.storageclasses.*.*",
			statFilter: "vmop.status.storageclasses.*.*.*",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.ref.Validate(); err != nil {
				t.Fatalf("Validate() = %v, want nil", err)
			}
			spec := events.SpecSubject(tt.ref)
			status := events.StatusSubject(tt.ref, "power")
			event := events.EventSubject(tt.ref, events.TypeVirtualMachinePoweredOn)
			for _, c := range []struct {
				what, got, want string
				tokens          int
			}{
				{"SpecSubject", spec, tt.spec, 5},
				{"StatusSubject", status, tt.status, 6},
				{"EventSubject", event, tt.event, 6},
			} {
				if c.got != c.want {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
				if n := len(strings.Split(c.got, ".")); n != c.tokens {
					t.Errorf("%s %q has %d tokens, want %d", c.what, c.got, n, c.tokens)
				}
				if !server.IsValidSubject(c.got) {
					t.Errorf("%s %q is not a valid subject", c.what, c.got)
				}
			}
			if got := events.SpecFilter(tt.ref.Plural); got != tt.specFilter || !server.SubjectMatchesFilter(spec, got) {
				t.Errorf("SpecFilter = %q, want %q matching %q", got, tt.specFilter, spec)
			}
			if got := events.StatusFilter(tt.ref.Plural); got != tt.statFilter || !server.SubjectMatchesFilter(status, got) {
				t.Errorf("StatusFilter = %q, want %q matching %q", got, tt.statFilter, status)
			}
			if !server.SubjectMatchesFilter(spec, events.SpecFilter("")) || !server.SubjectMatchesFilter(status, events.StatusFilter("")) {
				t.Errorf("the all-plurals filters miss %q or %q", spec, status)
			}

			gotRef, err := events.ParseSpecSubject(spec)
			if err != nil || gotRef != tt.ref {
				t.Errorf("ParseSpecSubject(%q) = %+v, %v; want %+v", spec, gotRef, err, tt.ref)
			}
			gotRef, service, err := events.ParseStatusSubject(status)
			if err != nil || gotRef != tt.ref || service != "power" {
				t.Errorf("ParseStatusSubject(%q) = %+v, %q, %v; want %+v, power", status, gotRef, service, err, tt.ref)
			}
			gotRef, what, err := events.ParseEventSubject(event)
			if err != nil || gotRef != tt.ref || what != "poweredon" {
				t.Errorf("ParseEventSubject(%q) = %+v, %q, %v; want %+v, poweredon", event, gotRef, what, err, tt.ref)
			}
			for _, s := range []string{spec, status, event} {
				if got := events.ObjectKey(s); got != spec {
					t.Errorf("ObjectKey(%q) = %q, want %q", s, got, spec)
				}
			}
		})
	}
}

func TestFiltersForAllPlurals(t *testing.T) {
	if got, want := events.SpecFilter(""), "vmop.spec.>"; got != want {
		t.Errorf("SpecFilter(\"\") = %q, want %q", got, want)
	}
	if got, want := events.StatusFilter(""), "vmop.status.>"; got != want {
		t.Errorf("StatusFilter(\"\") = %q, want %q", got, want)
	}
	if server.SubjectMatchesFilter(events.StatusSubject(events.Ref{Plural: "a", Name: "b"}, "s"), events.SpecFilter("")) {
		t.Error("the spec filter matches a status subject")
	}
}

func TestTokenRoundTrip(t *testing.T) {
	tests := []struct{ in, token string }{
		{"", "_"},
		{"vm", "vm"},
		{"web.example.com", "web_example_com"},
		{"a..b", "a__b"},
		{"-x-", "-x-"},
	}
	for _, tt := range tests {
		if got := events.EncodeToken(tt.in); got != tt.token {
			t.Errorf("EncodeToken(%q) = %q, want %q", tt.in, got, tt.token)
		}
		if got := events.DecodeToken(tt.token); got != tt.in {
			t.Errorf("DecodeToken(%q) = %q, want %q", tt.token, got, tt.in)
		}
	}
}

func TestParseRejectsOtherShapes(t *testing.T) {
	for _, s := range []string{
		"", "vmop.spec.vms.ns", "vmop.spec.vms.ns.name.extra", "other.spec.vms.ns.name",
		"vmop.status.vms.ns.name", "vmop.events.vms.ns.name.created",
	} {
		if _, err := events.ParseSpecSubject(s); !errors.Is(err, events.ErrMalformed) {
			t.Errorf("ParseSpecSubject(%q) error = %v, want ErrMalformed", s, err)
		}
	}
	for _, s := range []string{"vmop.status.vms.ns.name", "vmop.spec.vms.ns.name.power", "vmop.status.vms.ns.name.power.x"} {
		if _, _, err := events.ParseStatusSubject(s); !errors.Is(err, events.ErrMalformed) {
			t.Errorf("ParseStatusSubject(%q) error = %v, want ErrMalformed", s, err)
		}
	}
	for _, s := range []string{"vmop.events.vms.ns.name", "vmop.status.vms.ns.name.created", "vmop.events.vms.ns.name.created.x"} {
		if _, _, err := events.ParseEventSubject(s); !errors.Is(err, events.ErrMalformed) {
			t.Errorf("ParseEventSubject(%q) error = %v, want ErrMalformed", s, err)
		}
	}
}

func TestObjectKeyOfOtherSubjects(t *testing.T) {
	for _, s := range []string{"foo.bar", "vmop.spec.a.b", "vmop.status.a.b.c.d.e", "$JS.EVENT.ADVISORY.X"} {
		if got := events.ObjectKey(s); got != s {
			t.Errorf("ObjectKey(%q) = %q, want the subject itself", s, got)
		}
	}
}

func TestRefValidate(t *testing.T) {
	tests := []struct {
		name string
		ref  events.Ref
		ok   bool
	}{
		{"dns subdomain", events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "a.b-c"}, true},
		{"cluster scope", events.Ref{Plural: "storageclasses", Name: "gold"}, true},
		{"no plural", events.Ref{Namespace: "default", Name: "vm"}, false},
		{"dotted plural", events.Ref{Plural: "virtual.machines", Namespace: "default", Name: "vm"}, false},
		{"no name", events.Ref{Plural: "virtualmachines", Namespace: "default"}, false},
		{"underscore breaks the encoding", events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "a_b"}, false},
		{"underscore namespace", events.Ref{Plural: "virtualmachines", Namespace: "_", Name: "vm"}, false},
		{"wildcard", events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "*"}, false},
		{"full wildcard", events.Ref{Plural: "virtualmachines", Namespace: ">", Name: "vm"}, false},
		{"space", events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "a b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.ref.Validate()
			if tt.ok != (err == nil) {
				t.Fatalf("Validate(%+v) = %v, want ok=%v", tt.ref, err, tt.ok)
			}
			if err != nil && !errors.Is(err, events.ErrInvalidRef) {
				t.Errorf("Validate(%+v) = %v, want ErrInvalidRef", tt.ref, err)
			}
		})
	}
}

func TestRefString(t *testing.T) {
	got := []string{
		events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "vm"}.String(),
		events.Ref{Plural: "storageclasses", Name: "gold"}.String(),
	}
	want := []string{"virtualmachines/default/vm", "storageclasses/gold"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Ref.String() mismatch (-want +got):\n%s", diff)
	}
}
