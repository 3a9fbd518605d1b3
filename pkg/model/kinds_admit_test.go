package model

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// admitKind runs an object of a kind other than VirtualMachine through the gateway's
// stages in order: schema (422), schema defaults, defaulting (403; nil def = none),
// validation (422), else 200. obj becomes the admitted object.
func admitKind[T any](t *testing.T, kind string, obj, old *T,
	def func(obj, old *T) *field.Error, validate func(obj, old *T) field.ErrorList) (int, field.ErrorList) {
	t.Helper()
	var m map[string]any
	remarshalKind(t, obj, &m)
	if _, errs := CheckSchema(kind, m); len(errs) > 0 {
		return 422, errs
	}
	ApplyDefaults(kind, m)
	var zero T
	*obj = zero
	remarshalKind(t, m, obj)
	if def != nil {
		if ferr := def(obj, old); ferr != nil {
			return 403, field.ErrorList{ferr}
		}
	}
	if errs := validate(obj, old); len(errs) > 0 {
		return 422, errs
	}
	return 200, nil
}

func remarshalKind(t *testing.T, in, out any) {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
}

// ruleErrors renders errors as "<type> <path>" (and the bad value, where one is given), what
// the rule tables compare.
func ruleErrors(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		s := string(e.Type) + " " + e.Field
		if e.Type == field.ErrorTypeInvalid || e.Type == field.ErrorTypeDuplicate {
			s += " " + jsonValue(e.BadValue)
		}
		out = append(out, s)
	}
	return out
}

func jsonValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
