package readmodel

import (
	"encoding/json"
	"fmt"
)

// pluralSecrets are the objects whose values the read model does not keep: a Secret's
// data values are blanked (its keys stay, for the printer columns) and kubectl's
// last-applied annotation dropped, and the gateway reads both from the SPECS record the
// object's resourceVersion names when it serves one.
const pluralSecrets = "secrets"

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// redact returns body with a Secret's values removed; other kinds' bodies unchanged.
func redact(plural string, body []byte) ([]byte, error) {
	if plural != pluralSecrets {
		return body, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("decode secret: %w", err)
	}
	delete(top, "stringData")
	if raw, ok := top["metadata"]; ok {
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("decode secret metadata: %w", err)
		}
		var ann map[string]json.RawMessage
		if err := json.Unmarshal(meta["annotations"], &ann); err == nil && ann[lastApplied] != nil {
			delete(ann, lastApplied) // kubectl apply copies the whole object, data included, into it
			if meta["annotations"], err = encodeJSON(ann); err != nil {
				return nil, err
			}
			if top["metadata"], err = encodeJSON(meta); err != nil {
				return nil, err
			}
		}
	}
	if raw, ok := top["data"]; ok {
		var data map[string]json.RawMessage
		if err := json.Unmarshal(raw, &data); err != nil {
			return nil, fmt.Errorf("decode secret data: %w", err)
		}
		for k := range data {
			data[k] = json.RawMessage(`""`)
		}
		var err error
		if top["data"], err = encodeJSON(data); err != nil {
			return nil, err
		}
	}
	return encodeJSON(top)
}
