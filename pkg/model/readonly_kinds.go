package model

// GroupEvents is the API group of the newer Event kind, events.k8s.io.
const (
	GroupEvents   = "events.k8s.io"
	VersionEvents = "v1"
)

// ReadOnlyKinds are the kinds served for get, list and watch only, not stored in SPECS, so
// not among [Kinds]:
//   - the Kubernetes Events, core v1 and events.k8s.io/v1: one feed, the EVENTS stream,
//     served in two shapes;
//   - Pods, of which vmop runs none: they are served (always none) because kubectl
//     describe pvc lists the pods that mount the claim before it prints its events.
func ReadOnlyKinds() []Kind {
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
		{
			Group: GroupCore, Version: VersionCore, Kind: "Pod", ListKind: "PodList",
			Plural: "pods", Singular: "pod", ShortNames: []string{"po"},
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
