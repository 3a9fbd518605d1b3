package api

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/model/v1alpha4"
)

// Objects are stored, admitted and reconciled in their kind's hub version
// (vmoperator.vmware.com/v1alpha5). VM Operator kinds with a v1alpha4 conversion are also
// served as v1alpha4: requests are converted to the hub before admission, and every object
// in a response is converted back to the version the URL names.

// servedKinds are the hub kinds followed by the kinds served by conversion, in discovery
// order (the first version of a group is its preferred one).
func servedKinds() []model.Kind {
	return slices.Concat(model.Kinds(), v1alpha4.Kinds(), model.ReadOnlyKinds())
}

// servedKind resolves a URL's group, version and plural to the stored kind.
func servedKind(group, version, plural string) (model.Kind, bool) {
	k, ok := model.KindFor(group, plural)
	if !ok {
		return readOnlyKind(group, version, plural)
	}
	if k.Version == version {
		return k, true
	}
	return k, k.Group == model.GroupVMOperator && version == v1alpha4.Version && v1alpha4.Serves(k.Kind)
}

// converted reports whether the client addressed a version other than the stored one.
func (t target) converted() bool { return t.Version != "" && t.Version != t.Kind.Version }

// apiVersion is the apiVersion of the objects the client sends and receives.
func (t target) apiVersion() string {
	if !t.converted() {
		return t.Kind.APIVersion()
	}
	return t.Kind.Group + "/" + t.Version
}

// toHub converts a request object to the hub version in place and returns the fields the
// addressed version does not know (removed), for admission's fieldValidation.
func (t target) toHub(obj map[string]any) []string {
	if !t.converted() {
		return nil
	}
	return v1alpha4.ToHub(t.Kind.Kind, obj)
}

// fromHub converts a hub object to the addressed version in place.
func (t target) fromHub(obj map[string]any) {
	if t.converted() {
		v1alpha4.FromHub(t.Kind.Kind, obj)
	}
}

// restore keeps, in an update converted to the hub, the stored fields the addressed
// version cannot express (see package v1alpha4).
func (t target) restore(obj, old map[string]any) {
	if t.converted() {
		v1alpha4.Restore(t.Kind.Kind, obj, old)
	}
}

// fieldPaths renders hub field paths in the addressed version's names.
func (t target) fieldPaths() func(string) string {
	if !t.converted() {
		return nil
	}
	return func(s string) string { return v1alpha4.RenamePaths(t.Kind.Kind, s) }
}

// servedJSON converts stored JSON to the addressed version.
func (t target) servedJSON(raw []byte) ([]byte, error) {
	if !t.converted() {
		return raw, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decode stored %s: %w", t.Kind.Kind, err)
	}
	t.fromHub(obj)
	return json.Marshal(obj)
}

// writeObject answers with one stored object in the addressed version.
func writeObject(c echo.Context, t target, code int, raw []byte) error {
	out, err := t.servedJSON(raw)
	if err != nil {
		return err
	}
	return writeServed(c, t, code, out)
}

// writeHubObject answers with a decoded hub object in the addressed version; obj is
// converted in place.
func writeHubObject(c echo.Context, t target, code int, obj map[string]any) error {
	t.fromHub(obj)
	out, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode %s: %w", t.Kind.Kind, err)
	}
	return writeServed(c, t, code, out)
}
