package api

import (
	"encoding/json"
	"maps"
)

// withStatus is old, the stored object an update replaces, with raw, the status the read
// model holds for it (storedStatus): SPECS records carry no status, and some update rules
// judge a change by what vCenter reports (BOOT-5: a Disk boot entry must name one of
// status.volumes). old itself stays as stored, since the write compares against it.
func withStatus(raw json.RawMessage, old map[string]any) map[string]any {
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

// asRead gives the object of a spec record what a client reads with it, its status and
// resourceVersion, when the read model holds that record, and returns that
// resourceVersion ("" otherwise): a JSON patch may test it, or touch the status (which an
// update of the object then leaves as it is), as against kube-apiserver.
func (s *server) asRead(t target, seq uint64, cur map[string]any) string {
	stored, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name)
	if err != nil || stored.SpecSeq != seq {
		return ""
	}
	var served map[string]any
	if json.Unmarshal(stored.JSON, &served) != nil {
		return ""
	}
	if st, ok := served["status"]; ok {
		cur["status"] = st
	}
	rv := metaString(served, "resourceVersion")
	if rv != "" {
		metadata(cur)["resourceVersion"] = rv
	}
	return rv
}
