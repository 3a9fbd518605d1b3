package readmodel

import (
	"encoding/json"
	"fmt"
)

// pluralSecrets are the objects whose values the read model does not keep: a Secret's
// data values are blanked (its keys stay, for the printer columns), and the gateway reads
// them from the SPECS record the object's resourceVersion names when it serves one.
const pluralSecrets = "secrets"

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
