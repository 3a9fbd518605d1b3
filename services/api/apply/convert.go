package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmop/vmop/pkg/model/v1alpha4"
)

// versions converts objects between the versions a kind is served in, with the gateway's
// own conversion (package v1alpha4), so managed fields recorded through one version are
// kept and compared through another.
type versions struct{}

var _ runtime.ObjectConvertor = versions{}

func (versions) Convert(in, out, _ any) error {
	src, ok1 := in.(*unstructured.Unstructured)
	dst, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("convert %T to %T: only unstructured objects are converted", in, out)
	}
	dst.Object = runtime.DeepCopyJSON(src.Object)
	return nil
}

func (versions) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("convert %T: only unstructured objects are converted", in)
	}
	from := u.GroupVersionKind()
	to, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{from})
	if !ok {
		return nil, fmt.Errorf("%v is not served in %v", from, gv)
	}
	out := u.DeepCopy()
	if to.Version != from.Version {
		if to.Version == v1alpha4.Version {
			v1alpha4.FromHub(from.Kind, out.Object)
		} else {
			v1alpha4.ToHub(from.Kind, out.Object)
		}
	}
	out.SetGroupVersionKind(to)
	return out, nil
}

func (versions) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// noDefaults: defaults are admission's business, applied after the merge.
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// creater makes the empty object an apply to a new object merges into.
type creater struct{}

func (creater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
