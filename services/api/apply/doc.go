// Package apply records who owns which fields of an object and merges server-side apply
// configurations, through apimachinery's managedfields and structured-merge-diff, as
// kube-apiserver does: every create, update and patch records its field manager in
// metadata.managedFields, an apply merges the configuration into the live object and
// answers conflicts with other managers as a 409 that names the fields and managers.
//
// The structure of every kind (which maps are granular, which lists are sets or maps by
// key) comes from the OpenAPI v3 documents the gateway serves (package openapi), so what
// clients read and what the merge does agree.
package apply
