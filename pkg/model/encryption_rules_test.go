package model

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestEncryptionClassRules(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "enc", Namespace: "ns"}
	tests := []struct {
		name     string
		obj      map[string]any // the wire form: an absent spec cannot be written as a typed object
		wantCode int
		wantErrs []string
	}{
		{"9.4 keyProvider given", map[string]any{"metadata": meta, "spec": map[string]any{"keyProvider": "local"}}, 200, nil},
		{"9.4 keyProvider given without keyID", map[string]any{"metadata": meta, "spec": map[string]any{"keyProvider": "local", "keyID": ""}}, 200, nil},
		{"9.4 keyProvider missing (schema)", map[string]any{"metadata": meta, "spec": map[string]any{"keyID": "k"}}, 422,
			[]string{"FieldValueRequired spec.keyProvider"}},
		{"9.4 keyProvider empty", map[string]any{"metadata": meta, "spec": map[string]any{"keyProvider": ""}}, 422,
			[]string{"FieldValueRequired spec.keyProvider"}},
		{"9.4 spec missing", map[string]any{"metadata": meta}, 422, []string{"FieldValueRequired spec.keyProvider"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, errs := admitKind(t, "EncryptionClass", &tt.obj, nil, nil,
				func(obj, _ *map[string]any) field.ErrorList {
					var ec EncryptionClass
					remarshalKind(t, *obj, &ec)
					return ValidateEncryptionClass(&ec, nil)
				})
			if code != tt.wantCode {
				t.Errorf("code = %d, want %d", code, tt.wantCode)
			}
			if diff := cmp.Diff(tt.wantErrs, ruleErrors(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
