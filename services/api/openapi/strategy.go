package openapi

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinTypes are the Go types of the built-in kinds. Their struct tags carry the patch
// strategies (merge keys, merge or retainKeys) of a strategic merge patch: the gateway
// merges with them, and the documents publish them so that kubectl computes its patches
// with the same ones.
var builtinTypes = map[schema.GroupVersionKind]any{
	corev1.SchemeGroupVersion.WithKind("Namespace"):             corev1.Namespace{},
	corev1.SchemeGroupVersion.WithKind("Secret"):                corev1.Secret{},
	corev1.SchemeGroupVersion.WithKind("ConfigMap"):             corev1.ConfigMap{},
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"): corev1.PersistentVolumeClaim{},
	corev1.SchemeGroupVersion.WithKind("ResourceQuota"):         corev1.ResourceQuota{},
	corev1.SchemeGroupVersion.WithKind("Event"):                 corev1.Event{},
	eventsv1.SchemeGroupVersion.WithKind("Event"):               eventsv1.Event{},
	storagev1.SchemeGroupVersion.WithKind("StorageClass"):       storagev1.StorageClass{},
}

// BuiltinType is the Go type whose patch strategies a strategic merge patch of the kind
// follows; nil for kinds that take none (custom kinds, as CRDs in Kubernetes).
func BuiltinType(gvk schema.GroupVersionKind) any { return builtinTypes[gvk] }

// addPatchStrategies marks s, the schema of Go type typ, with the
// x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key of typ's fields.
func addPatchStrategies(s obj, typ reflect.Type) {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
		if typ.Kind() == reflect.Map {
			if sub, ok := s["additionalProperties"].(obj); ok {
				addPatchStrategies(sub, typ.Elem())
			}
			return
		}
		if typ.Kind() == reflect.Slice {
			sub, ok := s["items"].(obj)
			if !ok {
				return
			}
			s = sub
		}
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return
	}
	props, _ := s["properties"].(obj)
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && strings.Contains(opts, "inline") {
			addPatchStrategies(s, f.Type)
			continue
		}
		p, ok := props[name].(obj)
		if !ok {
			continue
		}
		if v := f.Tag.Get("patchStrategy"); v != "" {
			p["x-kubernetes-patch-strategy"] = v
		}
		if v := f.Tag.Get("patchMergeKey"); v != "" {
			p["x-kubernetes-patch-merge-key"] = v
		}
		addPatchStrategies(p, f.Type)
	}
}
