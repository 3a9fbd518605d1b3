package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// conditionsKey names the lists that merge element-wise by "type" instead of being taken whole.
const conditionsKey = "conditions"

// MergeStatus deep-merges the status parts of several services' slices into one .status.
//
// Each element is one slice's status, a JSON object; null or empty elements are skipped.
// Objects merge recursively. A "conditions" list merges by each condition's "type" and is
// sorted with "Ready" first, then by type (conditions without a type follow, in input
// order). Any other list, and any scalar, is taken whole from the last slice that has it:
// every list is owned by exactly one service, so callers pass slices in a fixed order
// (e.g. by service name) only to keep the result deterministic when that rule is broken.
//
// The result is compact JSON with object keys sorted, so equal inputs give equal bytes. It
// is nil when no slice contributes anything. An element that is not a JSON object is an error.
func MergeStatus(slices []json.RawMessage) (json.RawMessage, error) {
	var merged map[string]any
	for i, raw := range slices {
		part, err := decodeStatusPart(raw)
		if err != nil {
			return nil, fmt.Errorf("status slice %d: %w", i, err)
		}
		if part == nil {
			continue
		}
		if merged == nil {
			merged = map[string]any{}
		}
		mergeObject(merged, part)
	}
	if merged == nil {
		return nil, nil
	}
	sortConditions(merged)
	return encodeCompact(merged)
}

// decodeStatusPart decodes one slice's status, keeping numbers exact; nil means "nothing".
func decodeStatusPart(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("decode: trailing data after the status object")
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	default:
		return nil, fmt.Errorf("status is a %T, not a JSON object", v)
	}
}

// mergeObject merges src into dst in place; src wins for scalars and ordinary lists.
func mergeObject(dst, src map[string]any) {
	for k, sv := range src {
		dv, present := dst[k]
		if !present {
			dst[k] = sv
			continue
		}
		if dm, ok := dv.(map[string]any); ok {
			if sm, ok := sv.(map[string]any); ok {
				mergeObject(dm, sm)
				continue
			}
		}
		if k == conditionsKey {
			if dl, ok := dv.([]any); ok {
				if sl, ok := sv.([]any); ok {
					dst[k] = mergeConditions(dl, sl)
					continue
				}
			}
		}
		dst[k] = sv
	}
}

// mergeConditions unions two condition lists; for one type the condition from src wins.
func mergeConditions(dst, src []any) []any {
	index := make(map[string]int, len(dst))
	out := make([]any, len(dst), len(dst)+len(src))
	copy(out, dst)
	for i, c := range out {
		if t, ok := conditionType(c); ok {
			index[t] = i
		}
	}
	for _, c := range src {
		if t, ok := conditionType(c); ok {
			if i, seen := index[t]; seen {
				out[i] = c
				continue
			}
			index[t] = len(out)
		}
		out = append(out, c)
	}
	return out
}

// sortConditions orders every "conditions" list found in v, at any depth.
func sortConditions(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if list, ok := child.([]any); ok && k == conditionsKey {
				sort.SliceStable(list, func(i, j int) bool { return conditionLess(list[i], list[j]) })
			}
			sortConditions(child)
		}
	case []any:
		for _, child := range v {
			sortConditions(child)
		}
	}
}

// conditionLess puts Ready first, then typed conditions by type, then untyped ones.
func conditionLess(a, b any) bool {
	ta, okA := conditionType(a)
	tb, okB := conditionType(b)
	switch {
	case !okA || !okB:
		return okA && !okB
	case ta == ConditionReady || tb == ConditionReady:
		return ta == ConditionReady && tb != ConditionReady
	default:
		return ta < tb
	}
}

// conditionType is the condition's non-empty "type", if it has one.
func conditionType(c any) (string, bool) {
	m, ok := c.(map[string]any)
	if !ok {
		return "", false
	}
	t, ok := m["type"].(string)
	return t, ok && t != ""
}

// encodeCompact marshals v without HTML escaping; map keys come out sorted.
func encodeCompact(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode merged status: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
