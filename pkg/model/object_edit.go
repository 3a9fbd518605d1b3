package model

import (
	"bytes"
	"encoding/json"
)

// Helpers for services that change a stored object decoded as JSON (e.g. power's group
// members, storage's schema upgrade) before they append it to SPECS.

// DecodeObject decodes a stored object for an edit, keeping its numbers as written
// (json.Number): a float64 would round an integer above 2^53 on the way back.
func DecodeObject(body []byte) (map[string]any, error) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// Child returns obj[key] as an object, creating it when absent.
func Child(obj map[string]any, key string) map[string]any {
	m, ok := obj[key].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj[key] = m
	}
	return m
}

// CountSpecChange adds one to meta's generation, as the gateway counts a change of the
// spec. The generation is as decoded: a json.Number (Decoder.UseNumber) or a float64;
// none counts as 0.
func CountSpecChange(meta map[string]any) {
	var gen int64
	switch g := meta["generation"].(type) {
	case json.Number:
		gen, _ = g.Int64()
	case float64:
		gen = int64(g)
	}
	meta["generation"] = gen + 1
}
