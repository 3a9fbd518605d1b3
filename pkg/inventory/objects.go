package inventory

import (
	"context"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi"
)

// API versions of the kinds Objects returns.
const (
	coreV1         = "v1"
	vmopV1alpha5   = "vmoperator.vmware.com/v1alpha5"
	storageV1      = "storage.k8s.io/v1"
	encryptionV1a1 = "encryption.vmware.com/v1alpha1"
	policyV1a1     = "vsphere.policy.vmware.com/v1alpha1"
)

// Objects returns the API objects the gateway seeds, as JSON-ready maps (apiVersion, kind,
// metadata, then spec or the kind's own fields, and status): the Namespaces, then the
// cluster-scoped objects (StorageClasses, ClusterVirtualMachineImages), then per namespace the
// VirtualMachineClasses, VirtualMachineImages, EncryptionClass, TagPolicies and ComputePolicies.
//
// Everything that names something in vCenter is read back from the vCenter behind c (library
// items and their OVF descriptors, the template VMs of images of type VM, PBM profile IDs, tag
// IDs, the key provider), so the objects describe what Seed built, or fail. login opens the vAPI session the library and tags need.
func Objects(ctx context.Context, c *govmomi.Client, login *url.Userinfo) ([]map[string]any, error) {
	rc, err := vapiSession(ctx, c, login)
	if err != nil {
		return nil, fmt.Errorf("inventory objects: %w", err)
	}
	defer closeVAPISession(rc)

	images, err := libraryImages(ctx, rc)
	if err != nil {
		return nil, fmt.Errorf("inventory objects: %w", err)
	}
	templates, err := templateImages(ctx, c.Client)
	if err != nil {
		return nil, fmt.Errorf("inventory objects: %w", err)
	}
	storageClasses, err := storageClassObjects(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("inventory objects: %w", err)
	}
	policies, err := readPolicies(ctx, c, rc)
	if err != nil {
		return nil, fmt.Errorf("inventory objects: %w", err)
	}

	var out []map[string]any
	for _, ns := range Namespaces {
		out = append(out, namespaceObject(ns))
	}
	out = append(out, storageClasses...)
	for _, img := range images {
		if img.library.Scope == ClusterScope {
			out = append(out, img.object(""))
		}
	}
	for _, ns := range Namespaces {
		out = append(out, classObjects(ns)...)
		for _, img := range images {
			if img.library.Scope == NamespaceScope {
				out = append(out, img.object(ns))
			}
		}
		for _, img := range templates {
			out = append(out, img.object(ns))
		}
		out = append(out, policies.objects(ns)...)
	}
	return out, nil
}

// newObject starts an object: apiVersion, kind and metadata (namespace omitted when "", labels
// when empty).
func newObject(apiVersion, kind, namespace, name string, labels map[string]string) map[string]any {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	if len(labels) > 0 {
		l := make(map[string]any, len(labels))
		for k, v := range labels {
			l[k] = v
		}
		meta["labels"] = l
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
}

func namespaceObject(name string) map[string]any {
	o := newObject(coreV1, "Namespace", "", name, nil)
	o["spec"] = map[string]any{"finalizers": []any{"kubernetes"}}
	o["status"] = map[string]any{"phase": "Active"}
	return o
}
