package api

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// target is what a resource URL names: a kind, optionally a namespace, an object and a
// subresource. An empty Name means the collection.
type target struct {
	Kind        model.Kind // the stored (hub) kind
	Version     string     // the version the URL names: Kind.Version or one served by conversion
	Namespace   string
	Name        string
	Subresource string
}

// parseTarget reads Kubernetes resource paths:
//
//	/api/v1[/namespaces/<ns>]/<plural>[/<name>[/<sub>]]
//	/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/<sub>]]
//
// "/api/v1/namespaces/<name>" is the Namespace object itself, as in Kubernetes, and
// "/api/v1/namespaces/<name>/status" its status.
func parseTarget(path string) (target, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var group, version string
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		version, segs = segs[1], segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		group, version, segs = segs[1], segs[2], segs[3:]
	default:
		return target{}, false
	}
	if group == "" && len(segs) == 3 && segs[0] == "namespaces" && segs[2] == "status" {
		// "/api/v1/namespaces/<name>/status" is the Namespace's status, no kind "status".
		k, ok := servedKind(group, version, "namespaces")
		return target{Kind: k, Version: version, Name: segs[1], Subresource: "status"}, ok
	}
	var t target
	if len(segs) >= 3 && segs[0] == "namespaces" {
		t.Namespace, segs = segs[1], segs[2:]
	}
	if len(segs) == 0 || len(segs) > 3 {
		return target{}, false
	}
	k, ok := servedKind(group, version, segs[0])
	if !ok {
		return target{}, false
	}
	if t.Namespace != "" && !k.Namespaced {
		return target{}, false
	}
	t.Kind, t.Version = k, version
	if len(segs) > 1 {
		t.Name = segs[1]
	}
	if len(segs) > 2 {
		t.Subresource = segs[2]
	}
	return t, true
}

// ref is the stream identity of the named object.
func (t target) ref() events.Ref {
	return events.Ref{Plural: t.Kind.Plural, Namespace: t.Namespace, Name: t.Name}
}

// gr is the group-resource errors speak about.
func (t target) gr() schema.GroupResource {
	return schema.GroupResource{Group: t.Kind.Group, Resource: t.Kind.Plural}
}
