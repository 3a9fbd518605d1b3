package model

import (
	"maps"

	"k8s.io/apimachinery/pkg/api/validation"
	apivalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultSecret is stage 2 for Secrets, as Kubernetes does: stringData is merged into data
// (winning over it) and dropped, and the type defaults to Opaque; an immutable Secret
// keeps its type.
func DefaultSecret(s, old *Secret) *field.Error {
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
	if s.Type == "" {
		s.Type = SecretOpaque
		if old != nil {
			s.Type = old.Type
		}
	}
	return nil
}

// SecretSize is how many bytes of data a Secret holds (keys and decoded values).
func SecretSize(s *Secret) int {
	n := 0
	for k, v := range s.Data {
		n += len(k) + len(v)
	}
	for k, v := range s.StringData {
		n += len(k) + len(v)
	}
	return n
}

// ConfigMapSize is how many bytes of data a ConfigMap holds (keys and decoded values).
func ConfigMapSize(c *ConfigMap) int {
	n := 0
	for k, v := range c.Data {
		n += len(k) + len(v)
	}
	for k, v := range c.BinaryData {
		n += len(k) + len(v)
	}
	return n
}

// ValidateSecret is stage 3 for Secrets: keys are Kubernetes config keys, the type cannot
// change, and an immutable Secret keeps its data and stays immutable.
func ValidateSecret(s, old *Secret) field.ErrorList {
	errs := keyErrors(field.NewPath("data"), maps.Keys(s.Data))
	if old == nil {
		return errs
	}
	if s.Type != old.Type {
		errs = append(errs, field.Invalid(field.NewPath("type"), s.Type, validation.FieldImmutableErrorMsg))
	}
	return append(errs, immutableDataErrors(old.Immutable, s.Immutable, !maps.EqualFunc(s.Data, old.Data, bytesEqual))...)
}

// ValidateConfigMap is stage 3 for ConfigMaps: keys are Kubernetes config keys, unique
// across data and binaryData, and an immutable ConfigMap keeps its data.
func ValidateConfigMap(c, old *ConfigMap) field.ErrorList {
	errs := keyErrors(field.NewPath("data"), maps.Keys(c.Data))
	errs = append(errs, keyErrors(field.NewPath("binaryData"), maps.Keys(c.BinaryData))...)
	for k := range c.BinaryData {
		if _, dup := c.Data[k]; dup {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, "duplicate of a key in data"))
		}
	}
	if old == nil {
		return errs
	}
	changed := !maps.Equal(c.Data, old.Data) || !maps.EqualFunc(c.BinaryData, old.BinaryData, bytesEqual)
	return append(errs, immutableDataErrors(old.Immutable, c.Immutable, changed)...)
}

func keyErrors(path *field.Path, keys func(func(string) bool)) field.ErrorList {
	var errs field.ErrorList
	for k := range keys {
		for _, msg := range apivalidation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(path, k, msg))
		}
	}
	return errs
}

func immutableDataErrors(was, is *bool, dataChanged bool) field.ErrorList {
	if was == nil || !*was {
		return nil
	}
	var errs field.ErrorList
	if is == nil || !*is {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	if dataChanged {
		errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
	}
	return errs
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }
