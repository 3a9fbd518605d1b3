package api

import (
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/auth"
)

// The answers of kubectl auth can-i come from the checks the handlers make: authorize
// (namespaces, privileged writes, cluster scope), the status rule (only vmop services write
// status) and what the gateway serves at all (kinds, subresources, verbs). A request the
// gateway would refuse is never answered yes.

// nonResourcePaths are the paths served besides resources, by who may GET them
// ("/x/*" covers everything below /x).
var nonResourcePaths = []struct {
	path       string
	privileged bool
}{
	{"/api", false}, {"/api/*", false}, {"/apis", false}, {"/apis/*", false}, {"/version", false},
	{"/openapi/v2", false}, {"/openapi/v3", false}, {"/openapi/v3/*", false},
	{"/healthz", false}, {"/livez", false}, {"/readyz", false}, {"/metrics", true},
}

func (s *server) answerAccessReview(u auth.User, r *authorizationv1.SelfSubjectAccessReview) error {
	switch ra, nra := r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes; {
	case (ra == nil) == (nra == nil):
		return badRequest("spec: exactly one of resourceAttributes and nonResourceAttributes must be set")
	case ra != nil:
		r.Status.Allowed, r.Status.Reason = s.mayDo(u, *ra)
	default:
		r.Status.Allowed, r.Status.Reason = s.mayGetPath(u, *nra)
	}
	r.Status.Denied = false // the gateway has no explicit deny: a no is the absence of a rule
	return nil
}

// mayDo decides a resource request; "*" for verb, group or resource means every one served.
func (s *server) mayDo(u auth.User, ra authorizationv1.ResourceAttributes) (bool, string) {
	kinds := kindsNamed(ra.Group, ra.Resource, ra.Version)
	if len(kinds) == 0 {
		return false, fmt.Sprintf("the gateway serves no resource %q in API group %q", ra.Resource, ra.Group)
	}
	for _, k := range kinds {
		served, ok := servedVerbs(k, ra.Subresource)
		if !ok {
			return false, fmt.Sprintf("%s has no subresource %q", k.Plural, ra.Subresource)
		}
		verbs := []string{ra.Verb}
		if ra.Verb == "*" {
			verbs = served
		}
		for _, verb := range verbs {
			if !slices.Contains(served, verb) {
				return false, fmt.Sprintf("the gateway does not serve %s on %s", verb, resourceName(k, ra.Subresource))
			}
			if ok, why := s.mayDoOne(u, k, ra, verb); !ok {
				return false, why
			}
		}
	}
	return true, ""
}

// mayDoOne applies the handlers' checks to one served kind and verb.
func (s *server) mayDoOne(u auth.User, k model.Kind, ra authorizationv1.ResourceAttributes, verb string) (bool, string) {
	t := target{Kind: k, Version: k.Version, Name: ra.Name, Subresource: ra.Subresource}
	if k.Namespaced {
		t.Namespace = ra.Namespace
	}
	if slices.Contains(actionsOf(k), ra.Subresource) {
		verb = "update" // an action is a recorded change of the spec, authorized as one
	}
	if err := s.authorize(u, t, verb); err != nil {
		return false, err.Error()
	}
	write := verb != "get" && verb != "list" && verb != "watch"
	if _, service := auth.Service(u); write && ra.Subresource == "status" && !service {
		return false, "only vmop services write status"
	}
	return true, ""
}

// kindsNamed are the stored kinds a group and resource name ("*" for any), served in the
// version if one is named.
func kindsNamed(group, resource, version string) []model.Kind {
	var out []model.Kind
	for _, k := range model.Kinds() {
		if (group != "*" && k.Group != group) || (resource != "*" && k.Plural != resource) {
			continue
		}
		if version != "" && version != "*" {
			if _, ok := servedKind(k.Group, version, k.Plural); !ok {
				continue
			}
		}
		out = append(out, k)
	}
	return out
}

// servedVerbs are the verbs a kind serves on a subresource ("" the objects themselves).
func servedVerbs(k model.Kind, sub string) ([]string, bool) {
	switch {
	case sub == "":
		return objectVerbs, true
	case sub == "status" && k.HasStatus:
		return statusVerbs, true
	case slices.Contains(actionsOf(k), sub):
		return actionVerbs, true
	}
	return nil, false
}

func resourceName(k model.Kind, sub string) string {
	if sub == "" {
		return k.Plural
	}
	return k.Plural + "/" + sub
}

// mayGetPath decides a request for a path that is no resource: only GET is served.
func (s *server) mayGetPath(u auth.User, a authorizationv1.NonResourceAttributes) (bool, string) {
	if a.Verb != "get" {
		return false, fmt.Sprintf("the gateway serves only get on %s", a.Path)
	}
	for _, p := range nonResourcePaths {
		if !pathMatches(p.path, a.Path) {
			continue
		}
		if p.privileged && !s.auth.Privileged(u) {
			return false, fmt.Sprintf("only privileged users may get %s", a.Path)
		}
		return true, ""
	}
	return false, fmt.Sprintf("the gateway serves no path %s", a.Path)
}

func pathMatches(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(path, prefix)
	}
	return path == pattern
}

// answerRulesReview lists what the caller may do in the namespace, asking mayDo about
// every served kind, subresource and verb, so the list and can-i never disagree.
func (s *server) answerRulesReview(u auth.User, r *authorizationv1.SelfSubjectRulesReview) error {
	type groupVerbs struct{ group, verbs string }
	rules := map[groupVerbs]*authorizationv1.ResourceRule{}
	var order []groupVerbs
	for _, k := range model.Kinds() {
		subs := append([]string{""}, actionsOf(k)...)
		if k.HasStatus {
			subs = append(subs, "status")
		}
		for _, sub := range subs {
			served, _ := servedVerbs(k, sub)
			var allowed []string
			for _, verb := range served {
				ra := authorizationv1.ResourceAttributes{Namespace: r.Spec.Namespace, Verb: verb, Group: k.Group, Resource: k.Plural, Subresource: sub}
				if ok, _ := s.mayDo(u, ra); ok {
					allowed = append(allowed, verb)
				}
			}
			if len(allowed) == 0 {
				continue
			}
			key := groupVerbs{k.Group, strings.Join(allowed, ",")}
			if rules[key] == nil {
				rules[key] = &authorizationv1.ResourceRule{Verbs: allowed, APIGroups: []string{k.Group}}
				order = append(order, key)
			}
			rules[key].Resources = append(rules[key].Resources, resourceName(k, sub))
		}
	}
	for _, key := range order {
		r.Status.ResourceRules = append(r.Status.ResourceRules, *rules[key])
	}
	var paths []string
	for _, p := range nonResourcePaths {
		if !p.privileged || s.auth.Privileged(u) {
			paths = append(paths, p.path)
		}
	}
	r.Status.NonResourceRules = []authorizationv1.NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: paths}}
	return nil
}
