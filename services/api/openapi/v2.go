package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

// V2ProtobufContentType is the Content-Type of [V2Protobuf], as the API server sends it.
// kubectl asks with the older spelling "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
// and decodes whatever comes back as protobuf; it rejects a Content-Type with "@" (Go's
// mime parser refuses it), so the response must use this spelling.
const V2ProtobufContentType = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

// V2 returns the Swagger 2.0 document served at /openapi/v2 (JSON): every kind's schema
// under definitions, and a path for each collection, object and status endpoint.
func V2() []byte { return v2Docs().json }

// V2Protobuf returns the same document as V2 encoded as the protobuf kubectl requests
// with Accept: [V2ProtobufContentType].
func V2Protobuf() []byte { return v2Docs().proto }

// V2For picks the encoding of the /openapi/v2 document an Accept header asks for: the
// first listed of protobuf (what kubectl and client-go send) or JSON; JSON by default.
func V2For(accept string) (doc []byte, contentType string) {
	for _, mediaType := range strings.Split(accept, ",") {
		mediaType, _, _ = strings.Cut(strings.TrimSpace(mediaType), ";")
		switch {
		case strings.HasPrefix(mediaType, "application/com.github.proto-openapi.spec.v2") && strings.HasSuffix(mediaType, "+protobuf"):
			return V2Protobuf(), V2ProtobufContentType
		case mediaType == "application/json":
			return V2(), "application/json"
		}
	}
	return V2(), "application/json"
}

type v2Encodings struct{ json, proto []byte }

// v2Docs builds both encodings once: the kinds and their schemas are fixed at build time,
// so a failure is a programming error that the package's tests catch.
var v2Docs = sync.OnceValue(func() v2Encodings {
	doc, err := buildV2()
	if err != nil {
		panic(fmt.Sprintf("openapi: build v2 document: %v", err))
	}
	pb, err := toProtobuf(doc)
	if err != nil {
		panic(fmt.Sprintf("openapi: encode v2 document as protobuf: %v", err))
	}
	return v2Encodings{json: doc, proto: pb}
})

func buildV2() ([]byte, error) {
	defs := obj{}
	for name, s := range metaSchemas() {
		defs[name] = s
	}
	paths := obj{}
	ref := func(name string) string { return "#/definitions/" + name }
	for _, k := range servedKinds() {
		s, err := kindSchema(k, false)
		if err != nil {
			return nil, err
		}
		defs[definitionName(k.Group, k.Version, k.Kind)] = s
		defs[definitionName(k.Group, k.Version, k.ListKind)] = listSchema(k, ref)
		for _, p := range kindPaths(k) {
			paths[p.path] = v2PathItem(p)
		}
	}
	return encode(obj{
		"swagger":     "2.0",
		"info":        obj{"title": "vmop", "version": "v1"},
		"paths":       paths,
		"definitions": defs,
	})
}

func v2PathItem(p pathItem) obj {
	item := obj{"parameters": v2Params(p.params)}
	for _, op := range p.ops {
		params := v2Params(op.params)
		if op.body != "" {
			params = append(params, obj{"name": "body", "in": "body", "required": op.method != "delete",
				"schema": obj{"$ref": "#/definitions/" + op.body}})
		}
		o := obj{
			"operationId":                     op.id,
			"description":                     op.desc,
			"tags":                            []any{tag(op.kind)},
			"produces":                        op.produces,
			"schemes":                         []any{"https"},
			"parameters":                      params,
			"responses":                       v2Responses(op),
			"x-kubernetes-action":             op.action,
			"x-kubernetes-group-version-kind": gvk(op.kind.Group, op.kind.Version, op.kind.Kind),
		}
		if len(op.consumes) > 0 {
			o["consumes"] = op.consumes
		}
		item[op.method] = o
	}
	return item
}

func v2Params(ps []param) []any {
	out := []any{}
	for _, p := range ps {
		o := obj{"name": p.name, "in": p.in, "type": p.typ, "description": p.desc, "uniqueItems": true}
		if p.required {
			o["required"] = true
		}
		out = append(out, o)
	}
	return out
}

func v2Responses(op operation) obj {
	ok := obj{"description": "OK", "schema": obj{"$ref": "#/definitions/" + op.response}}
	r := obj{"200": ok, "401": obj{"description": "Unauthorized"}}
	if op.created {
		r["201"] = obj{"description": "Created", "schema": ok["schema"]}
	}
	if op.accepted {
		r["202"] = obj{"description": "Accepted", "schema": ok["schema"]}
	}
	return r
}

// toProtobuf converts the JSON document to the gnostic protobuf form client-go decodes.
func toProtobuf(doc []byte) ([]byte, error) {
	parsed, err := openapi_v2.ParseDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("parse swagger document: %w", err)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(parsed)
}

// encode writes indented JSON with sorted keys and without HTML escaping.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode document: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
