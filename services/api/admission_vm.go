package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// BuildVersion is the gateway's build, stamped into created-at annotations (D2).
var BuildVersion = "dev"

// NamespaceSettings are the per-namespace settings of api-rules §0.4; for now one set
// applies to every namespace.
type NamespaceSettings struct {
	NetworkProvider string // Named (default), VDS, NSX-T or VPC
	DefaultNetwork  string // the Named provider's network, e.g. "VM Network"
}

func newAdmission(rm *readmodel.Store, ns NamespaceSettings) *admission {
	vm := &vmAdmission{rm: rm, ns: ns}
	return &admission{
		defaulters: map[string]defaulter{"VirtualMachine": vm.defaults},
		validators: map[string]validator{},
	}
}

// vmAdmission holds what VirtualMachine rules look up: images and namespace settings.
type vmAdmission struct {
	rm *readmodel.Store
	ns NamespaceSettings
}

// defaults decodes the object into the typed VirtualMachine, applies the model's rules
// and encodes the result back into the request.
func (a *vmAdmission) defaults(_ context.Context, r *admitRequest) *field.Error {
	if !r.create() {
		return nil
	}
	var vm model.VirtualMachine
	if err := remarshal(r.Obj, &vm); err != nil {
		return field.Invalid(field.NewPath("spec"), nil, err.Error())
	}
	nsImages, clusterImages, err := a.images(r.Namespace)
	if err != nil {
		return field.InternalError(field.NewPath("spec", "imageName"), err)
	}
	if ferr := model.DefaultVirtualMachineCreate(&vm, model.CreateEnv{
		Privileged: r.Privileged, BuildVersion: BuildVersion,
		NetworkProvider: a.ns.NetworkProvider, DefaultNetwork: a.ns.DefaultNetwork,
		NamespaceImages: nsImages, ClusterImages: clusterImages, NewUUID: uuid.NewString,
	}); ferr != nil {
		return ferr
	}
	var out map[string]any
	if err := remarshal(&vm, &out); err != nil {
		return field.InternalError(field.NewPath("spec"), err)
	}
	delete(out, "status")
	clear(r.Obj)
	for k, v := range out {
		r.Obj[k] = v
	}
	return nil
}

// images lists the namespace's VirtualMachineImages and every ClusterVirtualMachineImage.
func (a *vmAdmission) images(ns string) (namespaced, cluster []model.ImageInfo, err error) {
	for _, scope := range []struct {
		plural, ns, kind string
		out              *[]model.ImageInfo
	}{
		{"virtualmachineimages", ns, "VirtualMachineImage", &namespaced},
		{"clustervirtualmachineimages", "", "ClusterVirtualMachineImage", &cluster},
	} {
		res, err := a.rm.List(readmodel.ListOptions{Plural: scope.plural, Namespace: scope.ns})
		if err != nil {
			return nil, nil, fmt.Errorf("list %s: %w", scope.plural, err)
		}
		for _, o := range res.Items {
			var img struct {
				Metadata struct{ Name string }
				Status   struct{ Name string }
			}
			if err := json.Unmarshal(o.JSON, &img); err != nil {
				return nil, nil, fmt.Errorf("decode %s: %w", scope.plural, err)
			}
			*scope.out = append(*scope.out, model.ImageInfo{Kind: scope.kind, Name: img.Metadata.Name, DisplayName: img.Status.Name})
		}
	}
	return namespaced, cluster, nil
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
