package api

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/vmop/vmop/services/api/openapi"
)

// strategicType is the Go type of t's built-in kind, whose struct tags carry the patch
// strategies (merge keys, $setElementOrder, $retainKeys) a strategic merge patch follows,
// as in kube-apiserver; nil for custom kinds, which take none (415, as for a CRD).
func (t target) strategicType() any {
	return openapi.BuiltinType(schema.FromAPIVersionAndKind(t.apiVersion(), t.Kind.Kind))
}

// strategicMergePatch applies a strategic merge patch to orig, following typ's patch
// strategies; a patch that cannot apply (a wrong directive or type) is 422.
func strategicMergePatch(typ any, orig, patch []byte) ([]byte, error) {
	out, err := strategicpatch.StrategicMergePatch(orig, patch, typ)
	if err != nil {
		return nil, unprocessable("the strategic merge patch does not apply: " + err.Error())
	}
	return out, nil
}
