package apply

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vmop/vmop/services/api/openapi"
)

// typeConverter builds structured-merge-diff types from the components of every OpenAPI
// v3 document the gateway serves; each schema carrying x-kubernetes-group-version-kind
// becomes the type of that kind.
func typeConverter() (managedfields.TypeConverter, error) {
	var root struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapi.V3Root(), &root); err != nil {
		return nil, fmt.Errorf("decode the OpenAPI v3 root: %w", err)
	}
	models := map[string]*spec.Schema{}
	for gv := range root.Paths {
		doc, ok := openapi.V3GroupVersion(gv)
		if !ok {
			return nil, fmt.Errorf("no OpenAPI v3 document for %s", gv)
		}
		var d struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(doc, &d); err != nil {
			return nil, fmt.Errorf("decode the OpenAPI v3 document of %s: %w", gv, err)
		}
		for name, s := range d.Components.Schemas {
			models[name] = s
		}
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("build field types from OpenAPI v3: %w", err)
	}
	return tc, nil
}
