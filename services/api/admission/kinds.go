package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmop/vmop/pkg/model"
)

// kindRules are stages 2 and 3 of the kinds besides VirtualMachine that have rules
// (api-rules §9): VirtualMachineClass, VirtualMachineGroup, EncryptionClass, Secret,
// ConfigMap, ResourceQuota and StorageClass (Kubernetes' immutable fields). The other
// kinds have none beyond their schema and the privileged-write check of authorization.
func kindRules() (map[string]defaulter, map[string]validator) {
	defaulters := map[string]defaulter{
		"VirtualMachineClass": typedDefaulter(func(_ *Request, c, old *model.VirtualMachineClass) *field.Error {
			return model.DefaultVirtualMachineClass(c, old)
		}),
		"VirtualMachineGroup": typedDefaulter(func(r *Request, g, old *model.VirtualMachineGroup) *field.Error {
			return model.DefaultVirtualMachineGroup(g, old, groupEnv(r))
		}),
		"Secret": typedDefaulter(func(_ *Request, sec, old *model.Secret) *field.Error {
			return model.DefaultSecret(sec, old)
		}),
	}
	validators := map[string]validator{
		"Secret": typedValidator(func(_ *Request, sec, old *model.Secret) field.ErrorList {
			return model.ValidateSecret(sec, old)
		}),
		"ConfigMap": typedValidator(func(_ *Request, c, old *model.ConfigMap) field.ErrorList {
			return model.ValidateConfigMap(c, old)
		}),
		"VirtualMachineClass": typedValidator(func(_ *Request, c, old *model.VirtualMachineClass) field.ErrorList {
			return model.ValidateVirtualMachineClass(c, old)
		}),
		"VirtualMachineGroup": typedValidator(func(r *Request, g, old *model.VirtualMachineGroup) field.ErrorList {
			return model.ValidateVirtualMachineGroup(g, old, groupEnv(r))
		}),
		"EncryptionClass": typedValidator(func(_ *Request, c, old *model.EncryptionClass) field.ErrorList {
			return model.ValidateEncryptionClass(c, old)
		}),
		"ResourceQuota": typedValidator(func(_ *Request, q, old *model.ResourceQuota) field.ErrorList {
			return model.ValidateResourceQuota(q, old)
		}),
		"StorageClass": typedValidator(func(_ *Request, sc, old *model.StorageClass) field.ErrorList {
			return model.ValidateStorageClass(sc, old)
		}),
		"CnsRegisterVolume": typedValidator(func(r *Request, _, old *model.CnsRegisterVolume) field.ErrorList {
			return model.ValidateCnsRegisterVolume(old, isService(r.User))
		}),
	}
	return defaulters, validators
}

func groupEnv(r *Request) model.GroupEnv {
	return model.GroupEnv{Privileged: r.Privileged, Now: time.Now}
}

// typedDefaulter runs a model defaulting function on the request's objects decoded as T.
// The result replaces r.Obj only when the rule changed something, so an object that needs
// no defaulting keeps the client's spelling (quantities, explicit zeroes) and re-submitting
// a stored object stays a no-op.
func typedDefaulter[T any](rule func(r *Request, obj, old *T) *field.Error) defaulter {
	return func(_ context.Context, r *Request) *field.Error {
		obj, old, err := typedObjects[T](r)
		if err != nil {
			return nil // not decodable: nothing to default; the validator reports it (422)
		}
		before, err := json.Marshal(obj)
		if err != nil {
			return field.InternalError(nil, err)
		}
		if ferr := rule(r, obj, old); ferr != nil {
			return ferr
		}
		after, err := json.Marshal(obj)
		if err != nil {
			return field.InternalError(nil, err)
		}
		if bytes.Equal(before, after) {
			return nil
		}
		var out map[string]any
		if err := json.Unmarshal(after, &out); err != nil {
			return field.InternalError(nil, err)
		}
		delete(out, "status")
		clear(r.Obj)
		maps.Copy(r.Obj, out)
		return nil
	}
}

// typedValidator runs a model validation function on the request's objects decoded as T.
func typedValidator[T any](rule func(r *Request, obj, old *T) field.ErrorList) validator {
	return func(_ context.Context, r *Request) field.ErrorList {
		obj, old, err := typedObjects[T](r)
		if err != nil {
			// The schema has no format for every Go type (e.g. durations).
			return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
		}
		return rule(r, obj, old)
	}
}

// typedObjects decodes the request's object and, on update, the stored one.
func typedObjects[T any](r *Request) (obj, old *T, err error) {
	obj = new(T)
	if err := remarshal(r.Obj, obj); err != nil {
		return nil, nil, fmt.Errorf("cannot decode the object: %w", err)
	}
	if r.Old != nil {
		old = new(T)
		if err := remarshal(r.Old, old); err != nil {
			return nil, nil, fmt.Errorf("cannot decode the stored object: %w", err)
		}
	}
	return obj, old, nil
}
