package model_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmop/vmop/pkg/model"
)

func TestSetMetadataEntry(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"adds to existing labels, keeps everything else",
			`{"kind":"VirtualMachine","metadata":{"name":"vm","generation":3,"labels":{"app":"x"}},"spec":{"big":12345678901234567890}}`,
			`{"kind":"VirtualMachine","metadata":{"name":"vm","generation":3,"labels":{"app":"x","topology.kubernetes.io/zone":"zone-a"}},"spec":{"big":12345678901234567890}}`},
		{"creates the labels",
			`{"metadata":{"name":"vm","labels":null}}`,
			`{"metadata":{"name":"vm","labels":{"topology.kubernetes.io/zone":"zone-a"}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := model.SetMetadataEntry([]byte(tc.in), "labels", "topology.kubernetes.io/zone", "zone-a")
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			dec := func(s []byte, v *any) {
				d := json.NewDecoder(bytes.NewReader(s))
				d.UseNumber()
				if err := d.Decode(v); err != nil {
					t.Fatal(err)
				}
			}
			dec(got, &g)
			dec([]byte(tc.want), &w)
			if d := cmp.Diff(w, g); d != "" {
				t.Errorf("body (-want +got):\n%s", d)
			}
		})
	}
	if _, err := model.SetMetadataEntry([]byte(`[]`), "annotations", "k", "v"); err == nil {
		t.Error("a body that is no object: no error")
	}
}
