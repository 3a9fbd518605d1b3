package auth

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmop/vmop/pkg/model"
)

// Access is what one request does: a verb on an object, a kind or a subresource.
type Access struct {
	Kind                         model.Kind
	Namespace, Name, Subresource string
	Verb                         string // get, list, watch, create, update, patch, delete
}

// Authorize replaces Kubernetes RBAC with the rules of api-rules §0.3 and §1: privileged
// callers may do everything; ordinary users work only inside their namespaces, may read
// cluster-scoped kinds, and may not write privileged kinds or status.
func (a *Authenticator) Authorize(u User, r Access) error {
	if a.Privileged(u) {
		return nil
	}
	verb := r.Verb
	write := verb != "get" && verb != "list" && verb != "watch"
	gr := schema.GroupResource{Group: r.Kind.Group, Resource: r.Kind.Plural}
	switch {
	case r.Kind.Namespaced && r.Namespace == "":
		return apierrors.NewForbidden(gr, "", fmt.Errorf("User %q cannot %s resource %q in API group %q at the cluster scope",
			u.Name, verb, r.Kind.Plural, r.Kind.Group))
	case r.Kind.Namespaced && !a.mayAccessNamespace(u, r.Namespace):
		return apierrors.NewForbidden(gr, r.Name, fmt.Errorf("User %q cannot %s resource %q in API group %q in the namespace %q",
			u.Name, verb, r.Kind.Plural, r.Kind.Group, r.Namespace))
	case write && (r.Kind.PrivilegedWrite || !r.Kind.Namespaced):
		return apierrors.NewForbidden(gr, r.Name, fmt.Errorf("User %q cannot %s %s: only privileged users may write them",
			u.Name, verb, r.Kind.Plural))
	case write && r.Subresource == "status":
		return apierrors.NewForbidden(gr, r.Name, fmt.Errorf("User %q cannot %s status: only vmop services write status", u.Name, verb))
	}
	return nil
}
