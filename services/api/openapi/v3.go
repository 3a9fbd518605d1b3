package openapi

import (
	"crypto/sha512"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/vmop/vmop/pkg/model"
)

// v3Set holds every OpenAPI v3 document, keyed by group-version path ("apis/<g>/<v>" or
// "api/v1"), with their hashes and the discovery document listing them.
type v3Set struct {
	docs   map[string][]byte
	hashes map[string]string
	root   []byte
}

// V3Root returns the /openapi/v3 discovery document: for each group-version path the URL
// of its document, whose hash parameter changes whenever the document does (clients cache
// by URL).
func V3Root() []byte { return v3Docs().root }

// V3GroupVersion returns the OpenAPI 3.0 document of one group-version, addressed as in
// V3Root ("apis/vmoperator.vmware.com/v1alpha5", "api/v1"); a leading "/" or
// "/openapi/v3/" is ignored.
func V3GroupVersion(path string) ([]byte, bool) {
	doc, ok := v3Docs().docs[v3Key(path)]
	return doc, ok
}

// V3Hash returns the hash that V3Root puts in the URL of a group-version's document (the
// uppercase hex SHA-512 of the document, as the API server computes it), usable as its
// ETag; "" for an unknown path.
func V3Hash(path string) string { return v3Docs().hashes[v3Key(path)] }

func v3Key(path string) string {
	path = strings.TrimPrefix(path, "/")
	return strings.TrimPrefix(path, "openapi/v3/")
}

// v3Docs builds every document once; see v2Docs for why failure panics.
var v3Docs = sync.OnceValue(func() v3Set {
	set, err := buildV3()
	if err != nil {
		panic(fmt.Sprintf("openapi: build v3 documents: %v", err))
	}
	return set
})

func buildV3() (v3Set, error) {
	byGV := map[string][]model.Kind{}
	for _, k := range servedKinds() {
		key := "apis/" + k.Group + "/" + k.Version
		if k.Group == "" {
			key = "api/" + k.Version
		}
		byGV[key] = append(byGV[key], k)
	}
	set := v3Set{docs: map[string][]byte{}, hashes: map[string]string{}}
	rootPaths := obj{}
	keys := make([]string, 0, len(byGV))
	for key := range byGV {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		doc, err := buildV3GroupVersion(byGV[key])
		if err != nil {
			return v3Set{}, fmt.Errorf("%s: %w", key, err)
		}
		hash := fmt.Sprintf("%X", sha512.Sum512(doc))
		set.docs[key], set.hashes[key] = doc, hash
		rootPaths[key] = obj{"serverRelativeURL": "/openapi/v3/" + key + "?hash=" + hash}
	}
	root, err := encode(obj{"paths": rootPaths})
	if err != nil {
		return v3Set{}, err
	}
	set.root = root
	return set, nil
}

func buildV3GroupVersion(kinds []model.Kind) ([]byte, error) {
	schemas := obj{}
	for name, s := range metaSchemas() {
		schemas[name] = s
	}
	paths := obj{}
	ref := func(name string) string { return "#/components/schemas/" + name }
	for _, k := range kinds {
		s, err := kindSchema(k, true)
		if err != nil {
			return nil, err
		}
		schemas[definitionName(k.Group, k.Version, k.Kind)] = s
		schemas[definitionName(k.Group, k.Version, k.ListKind)] = listSchema(k, ref)
		for _, p := range kindPaths(k) {
			paths[p.path] = v3PathItem(p, ref)
		}
	}
	return encode(obj{
		"openapi":    "3.0.0",
		"info":       obj{"title": "vmop", "version": "v1"},
		"paths":      paths,
		"components": obj{"schemas": schemas},
	})
}

func v3PathItem(p pathItem, ref func(string) string) obj {
	item := obj{"parameters": v3Params(p.params)}
	for _, op := range p.ops {
		o := obj{
			"operationId":                     op.id,
			"description":                     op.desc,
			"tags":                            []any{tag(op.kind)},
			"parameters":                      v3Params(op.params),
			"responses":                       v3Responses(op, ref),
			"x-kubernetes-action":             op.action,
			"x-kubernetes-group-version-kind": gvk(op.kind.Group, op.kind.Version, op.kind.Kind),
		}
		if op.body != "" {
			content := obj{}
			for _, ct := range op.consumes {
				content[ct] = obj{"schema": obj{"$ref": ref(op.body)}}
			}
			o["requestBody"] = obj{"content": content, "required": op.method != "delete"}
		}
		item[op.method] = o
	}
	return item
}

func v3Params(ps []param) []any {
	out := []any{}
	for _, p := range ps {
		o := obj{"name": p.name, "in": p.in, "description": p.desc, "schema": obj{"type": p.typ, "uniqueItems": true}}
		if p.required {
			o["required"] = true
		}
		out = append(out, o)
	}
	return out
}

func v3Responses(op operation, ref func(string) string) obj {
	content := obj{}
	for _, ct := range op.produces {
		content[ct] = obj{"schema": obj{"$ref": ref(op.response)}}
	}
	r := obj{"200": obj{"description": "OK", "content": content}, "401": obj{"description": "Unauthorized"}}
	if op.created {
		r["201"] = obj{"description": "Created", "content": content}
	}
	if op.accepted {
		r["202"] = obj{"description": "Accepted", "content": content}
	}
	return r
}
