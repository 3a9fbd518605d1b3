package model

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergeStatus(t *testing.T) {
	tests := []struct {
		name   string
		slices []string
		want   string // "" = nil result
	}{
		{
			name:   "no slices",
			slices: nil,
			want:   "",
		},
		{
			name:   "null and empty slices contribute nothing",
			slices: []string{"null", "", "  "},
			want:   "",
		},
		{
			name:   "empty object is a status",
			slices: []string{"{}"},
			want:   `{}`,
		},
		{
			name: "disjoint services",
			slices: []string{
				`{"powerState":"PoweredOn"}`,
				`{"uniqueID":"vm-42","zone":"zone-a"}`,
			},
			want: `{"powerState":"PoweredOn","uniqueID":"vm-42","zone":"zone-a"}`,
		},
		{
			name: "maps merge recursively",
			slices: []string{
				`{"hardware":{"cpu":{"reservation":1000}}}`,
				`{"hardware":{"memory":{"total":"4Gi"},"controllers":[{"type":"SCSI"}]}}`,
			},
			want: `{"hardware":{"controllers":[{"type":"SCSI"}],"cpu":{"reservation":1000},"memory":{"total":"4Gi"}}}`,
		},
		{
			name: "conditions merge by type, Ready first then by type",
			slices: []string{
				`{"conditions":[{"type":"VirtualMachineCreated","status":"True"},{"type":"Ready","status":"False"}]}`,
				`{"conditions":[{"type":"VirtualMachineClassReady","status":"True"},{"type":"GuestBootstrap","status":"Unknown"}]}`,
			},
			want: `{"conditions":[{"status":"False","type":"Ready"},{"status":"Unknown","type":"GuestBootstrap"},` +
				`{"status":"True","type":"VirtualMachineClassReady"},{"status":"True","type":"VirtualMachineCreated"}]}`,
		},
		{
			name: "same condition type: the later slice wins",
			slices: []string{
				`{"conditions":[{"type":"A","status":"False"}]}`,
				`{"conditions":[{"type":"A","status":"True"}]}`,
			},
			want: `{"conditions":[{"status":"True","type":"A"}]}`,
		},
		{
			name:   "single slice conditions are sorted too",
			slices: []string{`{"conditions":[{"type":"Z"},{"type":"Ready"},{"type":"B"}]}`},
			want:   `{"conditions":[{"type":"Ready"},{"type":"B"},{"type":"Z"}]}`,
		},
		{
			name:   "untyped conditions follow typed ones in input order",
			slices: []string{`{"conditions":[{"reason":"x"},{"type":"B"},{"reason":"y"},{"type":"A"}]}`},
			want:   `{"conditions":[{"type":"A"},{"type":"B"},{"reason":"x"},{"reason":"y"}]}`,
		},
		{
			name: "nested conditions are sorted",
			slices: []string{
				`{"volumes":[{"name":"d","conditions":[{"type":"b"},{"type":"Ready"}]}]}`,
			},
			want: `{"volumes":[{"conditions":[{"type":"Ready"},{"type":"b"}],"name":"d"}]}`,
		},
		{
			name: "other lists are taken whole",
			slices: []string{
				`{"network":{"interfaces":[{"name":"eth0"},{"name":"eth1"}]}}`,
				`{"network":{"interfaces":[{"name":"eth9"}]}}`,
			},
			want: `{"network":{"interfaces":[{"name":"eth9"}]}}`,
		},
		{
			name: "scalars: the later slice wins; a map replaces a scalar",
			slices: []string{
				`{"a":1,"b":"x"}`,
				`{"a":2,"b":{"c":true}}`,
			},
			want: `{"a":2,"b":{"c":true}}`,
		},
		{
			name:   "numbers keep their exact text",
			slices: []string{`{"big":12345678901234567890,"f":1.50}`},
			want:   `{"big":12345678901234567890,"f":1.50}`,
		},
		{
			name:   "no HTML escaping",
			slices: []string{`{"message":"a < b & c"}`},
			want:   `{"message":"a < b & c"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raws := make([]json.RawMessage, len(tt.slices))
			for i, s := range tt.slices {
				raws[i] = json.RawMessage(s)
			}
			got, err := MergeStatus(raws)
			if err != nil {
				t.Fatalf("MergeStatus() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("MergeStatus() mismatch (-want +got):\n%s", diff)
			}
			if tt.want == "" && got != nil {
				t.Errorf("MergeStatus() = %q, want nil", got)
			}
		})
	}
}

func TestMergeStatusDeterministic(t *testing.T) {
	slices := []json.RawMessage{
		json.RawMessage(`{"z":1,"conditions":[{"type":"C"},{"type":"Ready"}],"m":{"y":1,"x":2}}`),
		json.RawMessage(`{"a":1,"conditions":[{"type":"B"}],"m":{"w":3}}`),
	}
	first, err := MergeStatus(slices)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		got, err := MergeStatus(slices)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(first) {
			t.Fatalf("MergeStatus() = %s, earlier %s", got, first)
		}
	}
	if string(slices[0]) != `{"z":1,"conditions":[{"type":"C"},{"type":"Ready"}],"m":{"y":1,"x":2}}` {
		t.Errorf("MergeStatus modified its input: %s", slices[0])
	}
}

func TestMergeStatusErrors(t *testing.T) {
	tests := []struct {
		name  string
		slice string
	}{
		{"invalid JSON", `{"a":`},
		{"array", `[1,2]`},
		{"string", `"Ready"`},
		{"number", `42`},
		{"trailing data", `{"a":1} {"b":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MergeStatus([]json.RawMessage{json.RawMessage(`{"ok":true}`), json.RawMessage(tt.slice)})
			if err == nil {
				t.Errorf("MergeStatus(%s) = %s, want an error", tt.slice, got)
			}
		})
	}
}
