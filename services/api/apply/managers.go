package apply

import (
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// Managers keeps the field managers of the served kinds. Objects are passed as decoded
// JSON (map[string]any) carrying their apiVersion and kind; kind is the version a request
// addresses (managers are recorded in it), hub the version the kind is stored in.
type Managers struct {
	types managedfields.TypeConverter

	mu     sync.Mutex
	byKind map[schema.GroupVersionKind]*managedfields.FieldManager
}

// New builds the field types from the gateway's OpenAPI documents.
func New() (*Managers, error) {
	tc, err := typeConverter()
	if err != nil {
		return nil, err
	}
	return &Managers{types: tc, byKind: map[schema.GroupVersionKind]*managedfields.FieldManager{}}, nil
}

// Update returns obj with metadata.managedFields recording manager as the owner of what
// it changed from live (nil on create); the fields others own stay theirs. As in
// kube-apiserver a failure to record keeps live's managedFields and never fails the write.
func (m *Managers) Update(kind schema.GroupVersionKind, hub schema.GroupVersion, live, obj map[string]any, manager string) (map[string]any, error) {
	newObj, err := unstructuredOf(obj)
	if err != nil {
		return nil, err
	}
	fm, err := m.manager(kind, hub)
	if err != nil {
		return nil, err
	}
	liveObj := &unstructured.Unstructured{Object: map[string]any{}}
	if live != nil {
		if liveObj, err = unstructuredOf(live); err != nil {
			return nil, err
		}
	}
	liveObj.SetGroupVersionKind(newObj.GroupVersionKind())
	out := fm.UpdateNoErrors(liveObj, newObj, manager)
	return out.(*unstructured.Unstructured).Object, nil
}

// Apply merges the applied configuration into live (an empty object when it does not
// exist yet) as manager; a field another manager owns with a different value is a 409
// Conflict naming the fields and managers, unless force takes them over.
func (m *Managers) Apply(kind schema.GroupVersionKind, hub schema.GroupVersion, live, config map[string]any, manager string, force bool) (map[string]any, error) {
	applied, err := unstructuredOf(config)
	if err != nil {
		return nil, err
	}
	fm, err := m.manager(kind, hub)
	if err != nil {
		return nil, err
	}
	liveObj, err := unstructuredOf(live)
	if err != nil {
		return nil, err
	}
	out, err := fm.Apply(liveObj, applied, manager, force)
	if err != nil {
		return nil, err
	}
	// The merge yields the hub version; answer in the request's.
	versioned, err := versions{}.ConvertToVersion(out, kind.GroupVersion())
	if err != nil {
		return nil, err
	}
	return versioned.(*unstructured.Unstructured).Object, nil
}

func (m *Managers) manager(kind schema.GroupVersionKind, hub schema.GroupVersion) (*managedfields.FieldManager, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fm, ok := m.byKind[kind]; ok {
		return fm, nil
	}
	fm, err := managedfields.NewDefaultFieldManager(m.types, versions{}, noDefaults{}, creater{}, kind, hub, "", nil)
	if err != nil {
		return nil, fmt.Errorf("field manager of %v: %w", kind, err)
	}
	m.byKind[kind] = fm
	return fm, nil
}

// unstructuredOf copies obj into the JSON value types apimachinery expects (float64
// numbers, not the ints the gateway sets in metadata).
func unstructuredOf(obj map[string]any) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return u, nil
}
