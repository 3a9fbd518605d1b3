package model

import (
	"encoding/json"
	"fmt"
)

// SetMetadataEntry returns the object body with metadata.<field>[key] = value, field being
// "labels" or "annotations"; everything else is kept as it was (raw JSON, so numbers and
// unknown fields survive). Services use it for the metadata they own (e.g. placement's
// zone label) when they append the object to SPECS.
func SetMetadataEntry(body []byte, field, key, value string) ([]byte, error) {
	return editMetadata(body, field, func(entries map[string]string) { entries[key] = value })
}

// DeleteMetadataEntry is SetMetadataEntry removing metadata.<field>[key] instead.
func DeleteMetadataEntry(body []byte, field, key string) ([]byte, error) {
	return editMetadata(body, field, func(entries map[string]string) { delete(entries, key) })
}

// editMetadata returns the object body with edit applied to metadata.<field>.
func editMetadata(body []byte, field string, edit func(map[string]string)) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["metadata"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
	}
	entries := map[string]string{}
	if raw, ok := meta[field]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, fmt.Errorf("metadata.%s: %w", field, err)
		}
	}
	edit(entries)
	var err error
	if meta[field], err = json.Marshal(entries); err != nil {
		return nil, err
	}
	if obj["metadata"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}
