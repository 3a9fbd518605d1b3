// Package openapi builds the OpenAPI documents the gateway serves at /openapi/v2 and
// /openapi/v3, from the kinds of pkg/model and their generated schemas.
//
// What kubectl v1.32 reads from them (kubectl/pkg/explain/v2, kubectl/pkg/cmd/apply
// patcher.go, cli-runtime/pkg/resource query_param_verifier*.go, client-go discovery and
// openapi3; each fact below is exercised against the real kubectl in kubectl_test.go):
//
//   - Discovery of documents: GET /openapi/v3 returns {"paths": {"apis/<g>/<v>":
//     {"serverRelativeURL": "/openapi/v3/apis/<g>/<v>?hash=<H>"}, "api/v1": ...}}; kubectl
//     then GETs that URL (Accept: application/json) and caches by URL, so the hash must change
//     with the document.
//   - kubectl explain (default output, v3): resolves the resource through discovery, then in
//     the group-version document looks under paths "/apis/<g>/<v>[/namespaces/{namespace}]/
//     <plural>[/{name}]" for an operation (get/post/put/patch/delete) with
//     x-kubernetes-group-version-kind {group, kind, version}; picks the components.schemas
//     entry whose x-kubernetes-group-version-kind list contains exactly that map; walks
//     "properties" (also $ref, allOf, items, additionalProperties) and prints description,
//     type (from type/items/additionalProperties) and enum. Without /openapi/v3 it falls
//     back to v2 (--output plaintext-openapiv2 forces v2).
//   - Server-side field validation: kubectl apply/create/replace always send
//     fieldValidation=Strict (the --validate default) and skip client-side validation when
//     the server "supports" it: the v3 verifier finds, in the group-version document, the
//     PATCH operation whose single-map x-kubernetes-group-version-kind is the kind and looks
//     for a parameter named fieldValidation among that operation's own parameters (not the
//     path's; inline, since a $ref has no name). Any PATCH of the kind lacking it (the
//     paths are a map, so it may be the /status one) makes kubectl validate client-side.
//     Only when the v3 document cannot be fetched does the v2 verifier decide, the same
//     way (there inline or #/parameters/ references both count).
//   - Patch type of kubectl apply: the v3 PATCH requestBody.content of the kind (v2:
//     consumes) is checked for application/strategic-merge-patch+json. Present: a strategic
//     merge patch computed from our schema, with the x-kubernetes-patch-strategy and
//     -merge-key the built-in kinds publish from their Go types (strategy.go), the ones the
//     gateway merges by. Absent: kinds kubectl has compiled in (core, storage.k8s.io) still
//     get a strategic merge patch built from kubectl's Go types (with $setElementOrder and
//     $deleteFromPrimitiveList directives for e.g. finalizers); every other kind gets
//     application/merge-patch+json. So VM Operator kinds omit it (the gateway answers it 415,
//     as kube-apiserver for CRDs) and the built-in kinds list it.
//   - Client-side validation (only used when fieldValidation is not announced, or with
//     kubectl versions that predate it): /openapi/v2 fetched with Accept
//     application/com.github.proto-openapi.spec.v2@v1.0+protobuf and decoded as gnostic
//     protobuf only (a JSON body fails with "cannot parse invalid wire-format data"; a
//     Content-Type containing "@" fails Go's mime parser). The definition is found by its
//     x-kubernetes-group-version-kind list; unknown fields, types and required members are
//     checked. kube-openapi's parser rejects arrays without items, unknown primitive types
//     and $refs outside #/definitions, so v2 schemas stay within that.
//
// The documents are therefore shaped like a CRD's as the API server publishes them: fully
// inlined kind schemas (int-or-string fields get anyOf integer/string in v3 only), one path
// per collection, object and status, every operation tagged with its kind's GVK, and
// dryRun/fieldManager/fieldValidation on every POST, PUT and PATCH.
package openapi
