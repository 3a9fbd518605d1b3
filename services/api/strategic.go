package api

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// strategicTypes are the built-in kinds' Go types, whose struct tags carry the patch
// strategies (merge keys, $setElementOrder, $retainKeys) a strategic merge patch follows,
// as in kube-apiserver. Custom kinds have none: a strategic merge patch of one is 415, as
// for a CustomResourceDefinition.
var strategicTypes = map[schema.GroupVersionKind]any{
	corev1.SchemeGroupVersion.WithKind("Namespace"):             corev1.Namespace{},
	corev1.SchemeGroupVersion.WithKind("Secret"):                corev1.Secret{},
	corev1.SchemeGroupVersion.WithKind("ConfigMap"):             corev1.ConfigMap{},
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"): corev1.PersistentVolumeClaim{},
	corev1.SchemeGroupVersion.WithKind("ResourceQuota"):         corev1.ResourceQuota{},
	corev1.SchemeGroupVersion.WithKind("Event"):                 corev1.Event{},
	eventsv1.SchemeGroupVersion.WithKind("Event"):               eventsv1.Event{},
	storagev1.SchemeGroupVersion.WithKind("StorageClass"):       storagev1.StorageClass{},
}

func (t target) strategicType() any {
	return strategicTypes[schema.FromAPIVersionAndKind(t.apiVersion(), t.Kind.Kind)]
}

// strategicMergePatch applies a strategic merge patch to orig, following typ's patch
// strategies; a patch that cannot apply (a wrong directive or type) is 422.
func strategicMergePatch(typ any, orig, patch []byte) ([]byte, error) {
	out, err := strategicpatch.StrategicMergePatch(orig, patch, typ)
	switch {
	case err == nil:
		return out, nil
	case mergepatch.IsPreconditionFailed(err):
		return nil, unprocessable(err.Error())
	}
	return nil, unprocessable("the strategic merge patch does not apply: " + err.Error())
}
