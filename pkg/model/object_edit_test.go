package model_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/vmop/vmop/pkg/model"
)

func TestChildCreatesOrReturnsTheObject(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"name": "vm"}, "spec": "not an object"}
	if meta := model.Child(obj, "metadata"); meta["name"] != "vm" {
		t.Errorf("Child(metadata) = %v, want the object there", meta)
	}
	for _, key := range []string{"status", "spec"} {
		c := model.Child(obj, key)
		c["set"] = true
		if got, _ := obj[key].(map[string]any); got["set"] != true {
			t.Errorf("Child(%s) is not obj[%s] after the call: obj[%s] = %v", key, key, key, obj[key])
		}
	}
}

func TestCountSpecChange(t *testing.T) {
	decode := func(s string, numbers bool) map[string]any {
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		if numbers {
			dec.UseNumber()
		}
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tt := range []struct {
		name string
		meta map[string]any
	}{
		{"json.Number", decode(`{"generation":41}`, true)},
		{"float64", decode(`{"generation":41}`, false)},
	} {
		model.CountSpecChange(tt.meta)
		if b, _ := json.Marshal(tt.meta); string(b) != `{"generation":42}` {
			t.Errorf("%s: %s after a change of generation 41, want 42", tt.name, b)
		}
	}
	meta := map[string]any{}
	model.CountSpecChange(meta)
	if meta["generation"] != int64(1) {
		t.Errorf("generation %v after the first change, want 1", meta["generation"])
	}
}

// An edited object keeps its numbers as stored: 2^53+1 survives the round trip, which a
// float64 rounds to 2^53.
func TestDecodeObjectKeepsNumbers(t *testing.T) {
	obj, err := model.DecodeObject([]byte(`{"metadata":{"generation":3},"spec":{"big":9007199254740993}}`))
	if err != nil {
		t.Fatal(err)
	}
	model.CountSpecChange(model.Child(obj, "metadata"))
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"metadata":{"generation":4},"spec":{"big":9007199254740993}}`; string(out) != want {
		t.Errorf("edited object %s, want %s", out, want)
	}
}
