package admission

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/auth"
	"github.com/vmop/vmop/services/api/readmodel"
)

// BuildVersion is the gateway's build, stamped into created-at annotations (D2).
var BuildVersion = model.BuildVersion

// Reader is the read model as admission's rules consult it.
type Reader interface {
	Get(plural, namespace, name string) (readmodel.Object, error)
	List(o readmodel.ListOptions) (readmodel.ListResult, error)
}

// New is the admission of every kind; rules that look at other objects read them from rm.
func New(rm Reader, ns model.NamespaceSettings) *Admission {
	vm := &vmAdmission{rm: rm, ns: ns}
	defaulters, validators := kindRules()
	defaulters["VirtualMachine"], validators["VirtualMachine"] = vm.defaults, vm.validate
	defaulters["PersistentVolumeClaim"], validators["PersistentVolumeClaim"] = claimRules(rm, ns)
	deleting := map[string]validator{"VirtualMachine": vm.validateDeleting}
	return &Admission{rm: rm, defaulters: defaulters, validators: validators, deleting: deleting}
}

// vmAdmission runs the model's VirtualMachine rules on typed objects.
type vmAdmission struct {
	rm Reader
	ns model.NamespaceSettings
}

func (a *vmAdmission) env(r *Request) model.VMEnv {
	env := model.VMEnv{
		Privileged:      r.Privileged,
		ServiceIdentity: isService(r.User),
		UpgradeExempt:   isService(r.User) || slices.Contains(r.User.Groups, auth.GroupMasters),
		BuildVersion:    BuildVersion,
		Now:             time.Now,
		NewUUID:         uuid.NewString,
		Namespace:       a.ns,
		Lookup:          lookup{rm: a.rm},
	}
	if !r.create() {
		var stored struct {
			Status struct{ PowerState model.PowerState }
		}
		if o, err := a.rm.Get(r.Kind.Plural, r.Namespace, r.Name); err == nil && json.Unmarshal(o.JSON, &stored) == nil {
			env.ObservedPower = stored.Status.PowerState
		}
	}
	return env
}

// defaults decodes the objects into typed VirtualMachines, applies the model's rules and
// encodes the result back into the request.
func (a *vmAdmission) defaults(_ context.Context, r *Request) *field.Error {
	vm, old, err := typedVMs(r)
	if err != nil {
		return field.Invalid(field.NewPath("spec"), nil, err.Error())
	}
	if ferr := model.DefaultVirtualMachine(vm, old, a.env(r)); ferr != nil {
		return ferr
	}
	var out map[string]any
	if err := remarshal(vm, &out); err != nil {
		return field.InternalError(field.NewPath("spec"), err)
	}
	delete(out, "status")
	clear(r.Obj)
	maps.Copy(r.Obj, out)
	return nil
}

func (a *vmAdmission) validate(_ context.Context, r *Request) field.ErrorList {
	vm, old, err := typedVMs(r)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
	}
	return model.ValidateVirtualMachine(vm, old, a.env(r))
}

// validateDeleting is stage 3 for an update of a VM being deleted: the rules deletion obeys.
func (a *vmAdmission) validateDeleting(_ context.Context, r *Request) field.ErrorList {
	vm, old, err := typedVMs(r)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
	}
	return model.ValidateDeletingVirtualMachine(vm, old, a.env(r))
}

func typedVMs(r *Request) (vm, old *model.VirtualMachine, err error) {
	vm = new(model.VirtualMachine)
	if err := remarshal(r.Obj, vm); err != nil {
		return nil, nil, err
	}
	if r.Old != nil {
		old = new(model.VirtualMachine)
		if err := remarshal(r.Old, old); err != nil {
			return nil, nil, err
		}
	}
	return vm, old, nil
}

func isService(u auth.User) bool { return slices.Contains(u.Groups, auth.GroupServices) }

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
