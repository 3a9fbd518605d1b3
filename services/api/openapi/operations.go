package openapi

import (
	"slices"
	"strings"
	"unicode"

	"github.com/vmop/vmop/pkg/model"
)

// pathItem is one URL template with its operations, independent of the OpenAPI version.
type pathItem struct {
	path   string
	params []param // shared by every operation of the path
	ops    []operation
}

type operation struct {
	method   string // get, post, put, patch, delete
	action   string // x-kubernetes-action: get, list, post, put, patch, delete
	id       string
	desc     string
	params   []param
	body     string   // definition name of the request body; "" for none
	consumes []string // request body media types
	response string   // definition name of the 200 response
	produces []string
	created  bool // also answers 201 (create, replace)
	accepted bool // also answers 202 (create, delete)
	kind     model.Kind
}

type param struct {
	name, in, typ, desc string
	required            bool
}

var (
	producesObject = []string{"application/json", "application/yaml"}
	producesList   = []string{"application/json", "application/yaml", "application/json;stream=watch"}
	consumesObject = []string{"*/*"}
)

// The query parameters kubectl and client-go send. fieldValidation on every write is what
// makes kubectl rely on server-side field validation (see doc.go).
var (
	paramPretty          = param{name: "pretty", in: "query", typ: "string", desc: "If 'true', then the output is pretty printed."}
	paramDryRun          = param{name: "dryRun", in: "query", typ: "string", desc: "When present, indicates that modifications should not be persisted. The only valid value is All."}
	paramFieldManager    = param{name: "fieldManager", in: "query", typ: "string", desc: "fieldManager is a name associated with the actor or entity that is making these changes."}
	paramFieldValidation = param{name: "fieldValidation", in: "query", typ: "string", desc: "fieldValidation says how the server treats unknown fields in the request body: Ignore drops them silently, Warn (the default) drops them and returns one Warning header per field, Strict rejects the request with one error per field. The server checks the schema itself, so clients need not validate before sending."}
	paramNamespace       = param{name: "namespace", in: "path", typ: "string", desc: "object name and auth scope, such as for teams and projects", required: true}

	listParams = []param{
		{name: "allowWatchBookmarks", in: "query", typ: "boolean", desc: "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."},
		{name: "continue", in: "query", typ: "string", desc: "The continue option should be set when retrieving more results from the server."},
		{name: "fieldSelector", in: "query", typ: "string", desc: "A selector to restrict the list of returned objects by their fields. Defaults to everything."},
		{name: "labelSelector", in: "query", typ: "string", desc: "A selector to restrict the list of returned objects by their labels. Defaults to everything."},
		{name: "limit", in: "query", typ: "integer", desc: "limit is a maximum number of responses to return for a list call."},
		{name: "resourceVersion", in: "query", typ: "string", desc: "resourceVersion sets a constraint on what resource versions a request may be served from."},
		{name: "resourceVersionMatch", in: "query", typ: "string", desc: "resourceVersionMatch determines how resourceVersion is applied to list calls."},
		{name: "sendInitialEvents", in: "query", typ: "boolean", desc: "sendInitialEvents=true may be set together with watch=true to start the watch stream with synthetic events for the current objects."},
		{name: "timeoutSeconds", in: "query", typ: "integer", desc: "Timeout for the list/watch call."},
		{name: "watch", in: "query", typ: "boolean", desc: "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications."},
	}
	writeParams  = []param{paramDryRun, paramFieldManager, paramFieldValidation}
	deleteParams = []param{
		paramDryRun,
		{name: "gracePeriodSeconds", in: "query", typ: "integer", desc: "The duration in seconds before the object should be deleted."},
		{name: "propagationPolicy", in: "query", typ: "string", desc: "Whether and how garbage collection will be performed: Orphan, Background or Foreground."},
		{name: "orphanDependents", in: "query", typ: "boolean", desc: "Deprecated: use propagationPolicy."},
	}
)

// kindPaths lists the collection, item and status paths of a kind with the verbs the
// gateway serves on them.
func kindPaths(k model.Kind) []pathItem {
	r := newResource(k)
	paths := []pathItem{
		{path: r.collection, params: r.shared, ops: []operation{r.list("", ""), r.create()}},
		{path: r.collection + "/{name}", params: r.itemShared, ops: []operation{
			r.read("", ""), r.replace("", ""), r.patch("", ""), r.delete(),
		}},
	}
	if k.HasStatus {
		paths = append(paths, pathItem{path: r.collection + "/{name}/status", params: r.itemShared, ops: []operation{
			r.read("Status", "status of "), r.replace("Status", "status of "), r.patch("Status", "status of "),
		}})
	}
	if k.Namespaced {
		paths = append(paths, pathItem{path: r.prefix + "/" + k.Plural, params: []param{paramPretty}, ops: []operation{
			r.list("ForAllNamespaces", " in all namespaces"),
		}})
	}
	return paths
}

// resource holds what the operations of one kind share.
type resource struct {
	kind               model.Kind
	prefix, collection string // e.g. /apis/g/v and /apis/g/v/namespaces/{namespace}/plural
	scope              string // "Namespaced" or "", as operation IDs spell it
	self, listOf       string // definition names of the kind and its list
	shared, itemShared []param
	patchTypes         []string
}

func newResource(k model.Kind) resource {
	r := resource{
		kind:       k,
		prefix:     "/apis/" + k.Group + "/" + k.Version,
		self:       definitionName(k.Group, k.Version, k.Kind),
		listOf:     definitionName(k.Group, k.Version, k.ListKind),
		shared:     []param{paramPretty},
		patchTypes: []string{"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"},
	}
	if k.Group == "" {
		r.prefix = "/api/" + k.Version
	}
	r.collection = r.prefix + "/" + k.Plural
	if k.Namespaced {
		r.scope = "Namespaced"
		r.shared = []param{paramNamespace, paramPretty}
		r.collection = r.prefix + "/namespaces/{namespace}/" + k.Plural
	}
	nameParam := param{name: "name", in: "path", typ: "string", desc: "name of the " + k.Kind, required: true}
	r.itemShared = append([]param{nameParam}, r.shared...)
	if builtin(k) {
		r.patchTypes = append(r.patchTypes, "application/strategic-merge-patch+json")
	}
	return r
}

func (r resource) op(method, action, verb, suffix, desc string) operation {
	id := verb + opGroup(r.kind) + r.scope + r.kind.Kind + suffix
	if suffix == "ForAllNamespaces" {
		id = verb + opGroup(r.kind) + r.kind.Kind + suffix
	}
	return operation{method: method, action: action, id: id, desc: desc, response: r.self, produces: producesObject, kind: r.kind}
}

func (r resource) list(suffix, where string) operation {
	o := r.op("get", "list", "list", suffix, "list or watch objects of kind "+r.kind.Kind+where)
	o.params, o.response, o.produces = listParams, r.listOf, producesList
	return o
}

func (r resource) create() operation {
	o := r.op("post", "post", "create", "", "create a "+r.kind.Kind)
	o.params, o.body, o.consumes, o.created, o.accepted = writeParams, r.self, consumesObject, true, true
	return o
}

func (r resource) read(suffix, what string) operation {
	return r.op("get", "get", "read", suffix, "read "+what+"the specified "+r.kind.Kind)
}

func (r resource) replace(suffix, what string) operation {
	o := r.op("put", "put", "replace", suffix, "replace "+what+"the specified "+r.kind.Kind)
	o.params, o.body, o.consumes, o.created = writeParams, r.self, consumesObject, true
	return o
}

func (r resource) patch(suffix, what string) operation {
	o := r.op("patch", "patch", "patch", suffix, "partially update "+what+"the specified "+r.kind.Kind)
	o.params, o.body, o.consumes, o.created = writeParams, patchDef, r.patchTypes, true
	if suffix == "Status" { // server-side apply is served on the object only
		o.consumes = slices.DeleteFunc(slices.Clone(r.patchTypes), func(t string) bool { return t == "application/apply-patch+yaml" })
	}
	return o
}

func (r resource) delete() operation {
	o := r.op("delete", "delete", "delete", "", "delete a "+r.kind.Kind)
	o.params, o.body, o.consumes, o.response, o.accepted = deleteParams, deleteOptsDef, consumesObject, statusDef, true
	return o
}

// opGroup is the group and version part of operation IDs, e.g. VmoperatorVmwareComV1alpha5.
func opGroup(k model.Kind) string {
	group := k.Group
	if group == "" {
		group = "core"
	}
	var b strings.Builder
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(upperFirst(part))
	}
	return b.String() + upperFirst(k.Version)
}

// tag groups operations by group and version, e.g. vmoperatorVmwareCom_v1alpha5.
func tag(k model.Kind) string {
	g := opGroup(model.Kind{Group: k.Group})
	return string(unicode.ToLower(rune(g[0]))) + g[1:] + "_" + k.Version
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return string(unicode.ToUpper(rune(s[0]))) + s[1:]
}
