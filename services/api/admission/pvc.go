package admission

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmop/vmop/pkg/model"
)

// claimRules are a PersistentVolumeClaim's stages 2 and 3 (the model's rules), with the
// storage classes read from the read model.
func claimRules(rm Reader, ns model.NamespaceSettings) (defaulter, validator) {
	defaults := typedDefaulter(func(_ *Request, c, old *model.PersistentVolumeClaim) *field.Error {
		return model.DefaultPersistentVolumeClaim(c, old)
	})
	typed := typedValidator(func(r *Request, c, old *model.PersistentVolumeClaim) field.ErrorList {
		return model.ValidatePersistentVolumeClaim(c, old, model.ClaimEnv{
			Privileged: r.Privileged, Namespace: ns, StorageClass: lookup{rm: rm}.StorageClass,
		})
	})
	validate := func(ctx context.Context, r *Request) field.ErrorList {
		if errs := quantityErrors(r.Obj); len(errs) > 0 {
			return errs
		}
		return typed(ctx, r)
	}
	return defaults, validate
}

// quantityErrors names a request or limit that is no quantity at its own path; decoding the
// claim would otherwise fail as a whole.
func quantityErrors(obj map[string]any) field.ErrorList {
	spec, _ := obj["spec"].(map[string]any)
	res, _ := spec["resources"].(map[string]any)
	var errs field.ErrorList
	for _, list := range []string{"requests", "limits"} {
		values, _ := res[list].(map[string]any)
		for name, v := range values {
			path := field.NewPath("spec", "resources", list).Key(name)
			switch v := v.(type) {
			case string:
				if _, err := resource.ParseQuantity(v); err != nil {
					errs = append(errs, field.Invalid(path, v, "must be a quantity such as 8Gi or 500Mi"))
				}
			case float64, int64, int:
			default:
				errs = append(errs, field.Invalid(path, fmt.Sprint(v), "must be a quantity such as 8Gi or 500Mi"))
			}
		}
	}
	return errs
}
