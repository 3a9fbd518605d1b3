package model

import (
	"encoding/json"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// admitDocument runs a raw VirtualMachine document through admission the way the gateway
// does (services/api/admission: admission.go and vm.go): decode (400), object metadata and
// schema (422), schema defaults, typed defaulting (403) whose result goes back through
// JSON, validation (422). old is the stored object on update, nil on create. It returns
// the admitted object and 200, or the refusal's code and field errors.
func admitDocument(doc []byte, old *VirtualMachine, env VMEnv) (*VirtualMachine, int, field.ErrorList) {
	var obj map[string]any
	if err := json.Unmarshal(doc, &obj); err != nil || obj == nil {
		return nil, 400, nil
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["namespace"] = fuzzNamespace // the URL's namespace wins, as in the gateway
	errs := objectMetaErrors(obj)
	_, schemaErrs := CheckSchema("VirtualMachine", obj)
	if errs = append(errs, schemaErrs...); len(errs) > 0 {
		return nil, 422, errs
	}
	ApplyDefaults("VirtualMachine", obj)
	vm := new(VirtualMachine)
	if err := remarshalJSON(obj, vm); err != nil {
		return nil, 403, field.ErrorList{field.Invalid(specPath, nil, err.Error())}
	}
	if ferr := DefaultVirtualMachine(vm, old, env); ferr != nil {
		return nil, 403, field.ErrorList{ferr}
	}
	defaulted := new(VirtualMachine)
	if err := remarshalJSON(vm, defaulted); err != nil {
		return nil, 500, field.ErrorList{field.InternalError(specPath, err)}
	}
	if errs := ValidateVirtualMachine(defaulted, old, env); len(errs) > 0 {
		return nil, 422, errs
	}
	return defaulted, 200, nil
}

// objectMetaErrors is the gateway's stage-1 metadata check (Kubernetes' own rules).
func objectMetaErrors(obj map[string]any) field.ErrorList {
	var meta metav1.ObjectMeta
	if err := remarshalJSON(obj["metadata"], &meta); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}
	}
	return apimachineryvalidation.ValidateObjectMeta(&meta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

func remarshalJSON(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
