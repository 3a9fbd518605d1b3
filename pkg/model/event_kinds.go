package model

// GroupEvents is the API group of the newer Event kind, events.k8s.io.
const (
	GroupEvents   = "events.k8s.io"
	VersionEvents = "v1"
)

// EventKinds are the Kubernetes Event kinds, core v1 and events.k8s.io/v1: one feed, the
// EVENTS stream, served in two shapes. They are read-only (nothing appends them to SPECS),
// so they are not among [Kinds], which are the stored kinds.
func EventKinds() []Kind {
	return []Kind{
		{
			Group: GroupCore, Version: VersionCore, Kind: "Event", ListKind: "EventList",
			Plural: "events", Singular: "event", ShortNames: []string{"ev"},
			Namespaced: true, ReadOnly: true,
		},
		{
			Group: GroupEvents, Version: VersionEvents, Kind: "Event", ListKind: "EventList",
			Plural: "events", Singular: "event", ShortNames: []string{"ev"},
			Namespaced: true, ReadOnly: true,
		},
	}
}

// KindForPlural returns the stored kind whose resource plural is plural (plurals are
// unique across the groups served).
func KindForPlural(plural string) (Kind, bool) {
	for _, k := range kinds {
		if k.Plural == plural {
			return k, true
		}
	}
	return Kind{}, false
}
