package api

import (
	"encoding/json"
	"maps"
)

// withStatus is old, the stored object an update replaces, with the status the read model
// holds for it: SPECS records carry no status, and some update rules judge a change by
// what vCenter reports (BOOT-5: a Disk boot entry must name one of status.volumes). old
// itself stays as stored, since the write compares against it.
func (s *server) withStatus(t target, old map[string]any) map[string]any {
	raw := s.storedStatus(t)
	if len(raw) == 0 {
		return old
	}
	var status map[string]any
	if json.Unmarshal(raw, &status) != nil {
		return old
	}
	admitted := maps.Clone(old)
	admitted["status"] = status
	return admitted
}
