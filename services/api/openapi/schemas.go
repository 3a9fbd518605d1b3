package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/model/v1alpha4"
)

type obj = map[string]any

// Names of the apimachinery definitions the operations refer to.
const (
	metaPrefix    = "io.k8s.apimachinery.pkg.apis.meta.v1."
	statusDef     = metaPrefix + "Status"
	deleteOptsDef = metaPrefix + "DeleteOptions"
	patchDef      = metaPrefix + "Patch"
)

// definitionName names a kind's schema the way the API server names it: reversed group
// for custom groups (com.vmware.vmoperator.v1alpha5.VirtualMachine), io.k8s.api.<group>
// for Kubernetes' own.
func definitionName(group, version, kind string) string {
	switch {
	case group == "":
		return "io.k8s.api.core." + version + "." + kind
	case strings.HasSuffix(group, ".k8s.io"):
		return "io.k8s.api." + strings.TrimSuffix(group, ".k8s.io") + "." + version + "." + kind
	}
	labels := strings.Split(group, ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".") + "." + version + "." + kind
}

// builtin reports whether kubectl has the kind compiled in (core and *.k8s.io groups). For
// those kubectl apply sends strategic merge patches whatever the documents say, so the
// documents advertise them: kubectl then computes the patch from our schemas, which carry
// the kinds' patch strategies (strategy.go), and the gateway merges it with the same ones.
func builtin(k model.Kind) bool {
	return k.Group == "" || strings.HasSuffix(k.Group, ".k8s.io")
}

func gvk(group, version, kind string) obj {
	return obj{"group": group, "version": version, "kind": kind}
}

// servedKinds are the stored kinds and the kinds served by conversion (v1alpha4); each
// version gets its own paths and definitions.
func servedKinds() []model.Kind { return append(model.Kinds(), v1alpha4.Kinds()...) }

// schemaOf is the schema of a kind in its version.
func schemaOf(k model.Kind) (*model.Schema, bool) {
	if k.Group == model.GroupVMOperator && k.Version == v1alpha4.Version {
		return v1alpha4.SchemaFor(k.Kind)
	}
	return model.SchemaFor(k.Kind)
}

// kindSchema is the published schema of a kind: the model's structural schema with the
// x-kubernetes-group-version-kind list kubectl looks kinds up by.
func kindSchema(k model.Kind, v3 bool) (obj, error) {
	s, ok := schemaOf(k)
	if !ok {
		return nil, fmt.Errorf("no schema for kind %s", k.Kind)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode schema of %s: %w", k.Kind, err)
	}
	var out obj
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decode schema of %s: %w", k.Kind, err)
	}
	if v3 {
		addIntOrStringAnyOf(out)
	}
	if typ := BuiltinType(schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}); typ != nil {
		addPatchStrategies(out, reflect.TypeOf(typ))
	}
	out["x-kubernetes-group-version-kind"] = []any{gvk(k.Group, k.Version, k.Kind)}
	return out, nil
}

// addIntOrStringAnyOf spells int-or-string fields as CRDs publish them in OpenAPI v3.
// (Swagger 2.0 has no anyOf; there they stay untyped.)
func addIntOrStringAnyOf(s obj) {
	if s["x-kubernetes-int-or-string"] == true {
		s["anyOf"] = []any{obj{"type": "integer"}, obj{"type": "string"}}
	}
	if props, ok := s["properties"].(obj); ok {
		for _, p := range props {
			addIntOrStringAnyOf(p.(obj))
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if sub, ok := s[key].(obj); ok {
			addIntOrStringAnyOf(sub)
		}
	}
}

// listSchema is the schema of a kind's list, with items referring to the kind's schema.
func listSchema(k model.Kind, ref func(string) string) obj {
	return obj{
		"description": k.ListKind + " is a list of " + k.Kind + ".",
		"type":        "object",
		"required":    []any{"items"},
		"properties": obj{
			"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
			"kind":       str("Kind is a string value representing the REST resource this object represents."),
			"metadata":   listMeta(),
			"items": obj{
				"description": "List of " + k.Plural + ".",
				"type":        "array",
				"items":       obj{"$ref": ref(definitionName(k.Group, k.Version, k.Kind))},
			},
		},
		"x-kubernetes-group-version-kind": []any{gvk(k.Group, k.Version, k.ListKind)},
	}
}

// metaSchemas are the apimachinery types the operations use as bodies and responses.
func metaSchemas() map[string]obj {
	return map[string]obj{
		statusDef: {
			"description": "Status is a return value for calls that don't return other objects.",
			"type":        "object",
			"properties": obj{
				"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
				"kind":       str("Kind is a string value representing the REST resource this object represents."),
				"metadata":   listMeta(),
				"status":     str("Status of the operation. One of: \"Success\" or \"Failure\"."),
				"message":    str("A human-readable description of the status of this operation."),
				"reason":     str("A machine-readable description of why this operation is in the \"Failure\" status."),
				"code":       obj{"description": "Suggested HTTP return code for this status, 0 if not set.", "type": "integer", "format": "int32"},
				"details": obj{
					"description":                          "Extended data associated with the reason, e.g. the field errors (causes).",
					"type":                                 "object",
					"x-kubernetes-preserve-unknown-fields": true,
				},
			},
			"x-kubernetes-group-version-kind": []any{gvk("", "v1", "Status")},
		},
		deleteOptsDef: {
			"description": "DeleteOptions may be provided when deleting an API object.",
			"type":        "object",
			"properties": obj{
				"apiVersion":         str("APIVersion defines the versioned schema of this representation of an object."),
				"kind":               str("Kind is a string value representing the REST resource this object represents."),
				"dryRun":             obj{"description": "When present, indicates that modifications should not be persisted.", "type": "array", "items": str("")},
				"gracePeriodSeconds": obj{"description": "The duration in seconds before the object should be deleted.", "type": "integer", "format": "int64"},
				"propagationPolicy":  str("Whether and how garbage collection will be performed."),
				"orphanDependents":   obj{"description": "Deprecated: use propagationPolicy.", "type": "boolean"},
				"preconditions": obj{
					"description": "Must be fulfilled before a deletion is carried out.",
					"type":        "object",
					"properties": obj{
						"resourceVersion": str("Specifies the target ResourceVersion."),
						"uid":             str("Specifies the target UID."),
					},
				},
			},
		},
		patchDef: {
			"description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
			"type":        "object",
		},
	}
}

func listMeta() obj {
	return obj{
		"description": "Standard list metadata.",
		"type":        "object",
		"properties": obj{
			"resourceVersion":    str("String that identifies the server's internal version of this object."),
			"continue":           str("Continue may be set if the user set a limit on the number of items returned."),
			"remainingItemCount": obj{"description": "The number of subsequent items in the list.", "type": "integer", "format": "int64"},
		},
	}
}

func str(desc string) obj {
	s := obj{"type": "string"}
	if desc != "" {
		s["description"] = desc
	}
	return s
}
