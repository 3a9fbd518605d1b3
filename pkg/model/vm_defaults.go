package model

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ImageInfo is what image resolution (D9) knows of an image.
type ImageInfo struct {
	Kind        string // VirtualMachineImage or ClusterVirtualMachineImage
	Name        string // object name, e.g. vmi-0a0044d7c690bcbea
	DisplayName string // status.name
}

// Network provider types of a namespace (api-rules §0.4).
const (
	NetworkProviderNamed = "Named"
	NetworkProviderVDS   = "VDS"
	NetworkProviderNSXT  = "NSX-T"
	NetworkProviderVPC   = "VPC"
)

var specPath = field.NewPath("spec")

// defaultVirtualMachineCreate applies the create defaults of api-rules §6.1 in rule order.
func defaultVirtualMachineCreate(vm *VirtualMachine, env VMEnv) *field.Error {
	s := &vm.Spec
	if vm.Annotations == nil {
		vm.Annotations = map[string]string{}
	}
	vm.Annotations[AnnotationCreatedAtBuild] = env.BuildVersion // D2
	vm.Annotations[AnnotationCreatedAtSchema] = SchemaVersion
	defaultInterfaces(vm, env) // D3
	if s.PowerState == "" {    // D4
		s.PowerState = PowerStateOn
	}
	if s.Hardware != nil { // D5
		for i := range s.Hardware.Cdrom {
			if s.Hardware.Cdrom[i].Image.Kind == "" {
				s.Hardware.Cdrom[i].Image.Kind = "VirtualMachineImage"
			}
		}
	}
	if s.ImageName == "" && s.Hardware != nil && len(s.Hardware.Cdrom) > 0 { // D6
		s.ImageName = firstCdromImage(s.Hardware.Cdrom)
	}
	if err := defaultUUIDs(s, env); err != nil { // D7, D8
		return err
	}
	if err := resolveImage(vm, env); err != nil { // D9
		return err
	}
	if err := defaultEncryptionClass(vm, env); err != nil { // D10
		return err
	}
	defaultVolumeModes(vm) // D12
	if s.Hardware == nil { // D13
		s.Hardware = &VirtualMachineHardwareSpec{}
	}
	if len(s.Hardware.IDEControllers) == 0 {
		s.Hardware.IDEControllers = []IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}}
	}
	// D18/D19 are conditioned on the new object being upgraded; an upgrade-exempt caller
	// may create one already upgraded, and its devices are placed now rather than by its
	// first update, so re-submitting the created object stays a no-op (api-rules §5.1).
	if upgraded(vm, env) {
		placeDevices(vm, nil, env)
	}
	return nil
}

// defaultInterfaces is D3: one eth0 on the provider's default network unless networking
// is off or suppressed; otherwise complete the network refs that were given.
func defaultInterfaces(vm *VirtualMachine, env VMEnv) {
	s := &vm.Spec
	if s.Network != nil && s.Network.Disabled {
		return
	}
	if s.Network == nil || len(s.Network.Interfaces) == 0 {
		if _, off := vm.Annotations[AnnotationNoDefaultNIC]; off {
			return
		}
		if s.Network == nil {
			s.Network = &VirtualMachineNetworkSpec{}
		}
		s.Network.Interfaces = []VirtualMachineNetworkInterfaceSpec{{Name: "eth0"}}
	}
	for i := range s.Network.Interfaces {
		ifc := &s.Network.Interfaces[i]
		if ifc.Network == nil {
			ifc.Network = &PartialObjectRef{}
		}
		switch env.Namespace.NetworkProvider {
		case "", NetworkProviderNamed:
			if ifc.Network.Name == "" {
				ifc.Network.Name = env.Namespace.DefaultNetwork
			}
		default:
			ref := providerNetworkRef(env.Namespace.NetworkProvider)
			if ifc.Network.APIVersion == "" {
				ifc.Network.APIVersion = ref.APIVersion
			}
			if ifc.Network.Kind == "" {
				ifc.Network.Kind = ref.Kind
			}
		}
	}
}

func providerNetworkRef(provider string) PartialObjectRef {
	switch provider {
	case NetworkProviderVDS:
		return PartialObjectRef{APIVersion: "netoperator.vmware.com/v1alpha1", Kind: "Network"}
	case NetworkProviderNSXT:
		return PartialObjectRef{APIVersion: "vmware.com/v1alpha1", Kind: "VirtualNetwork"}
	default:
		return PartialObjectRef{APIVersion: "crd.nsx.vmware.com/v1alpha1", Kind: "SubnetSet"}
	}
}

func firstCdromImage(cdroms []VirtualMachineCdromSpec) string {
	for _, c := range cdroms {
		if c.Connected == nil || *c.Connected {
			return c.Image.Name
		}
	}
	return cdroms[0].Image.Name
}

// defaultUUIDs is D7 and D8: only privileged callers choose UUIDs; the cloud-init
// instance ID follows the BIOS UUID.
func defaultUUIDs(s *VirtualMachineSpec, env VMEnv) *field.Error {
	if s.InstanceUUID != "" && !env.Privileged {
		return field.Forbidden(specPath.Child("instanceUUID"), "only privileged users may set the instance UUID")
	}
	if s.InstanceUUID == "" {
		s.InstanceUUID = env.NewUUID()
	}
	if s.BiosUUID != "" && !env.Privileged {
		return field.Forbidden(specPath.Child("biosUUID"), "only privileged users may set the BIOS UUID")
	}
	if s.BiosUUID == "" {
		s.BiosUUID = env.NewUUID()
	}
	if s.Bootstrap != nil && s.Bootstrap.CloudInit != nil && s.Bootstrap.CloudInit.InstanceID == "" {
		s.Bootstrap.CloudInit.InstanceID = s.BiosUUID
	}
	return nil
}

// resolveImage is D9: spec.imageName, an object or display name, becomes spec.image.
func resolveImage(vm *VirtualMachine, env VMEnv) *field.Error {
	s := &vm.Spec
	if s.ImageName == "" {
		return nil
	}
	namespaced, cluster, err := env.Lookup.Images(vm.Namespace)
	if err != nil {
		return field.InternalError(specPath.Child("imageName"), err)
	}
	got, ferr := ResolveImageName(s.ImageName, namespaced, cluster)
	if ferr != nil {
		return ferr
	}
	if s.Image == nil {
		s.Image = &ImageRef{Kind: got.Kind, Name: got.Name}
		return nil
	}
	if s.Image.Kind != got.Kind || s.Image.Name != got.Name {
		return field.Invalid(specPath.Child("imageName"), s.ImageName,
			"resolves to "+got.Kind+" "+got.Name+", not to the image named in spec.image")
	}
	return nil
}

// ResolveImageName finds the image a VM's imageName means (api-rules §9.2): an object
// name starting with "vmi-" in the namespace, then in the cluster; otherwise exactly one
// image whose display name matches across both scopes.
func ResolveImageName(name string, namespaced, cluster []ImageInfo) (ImageInfo, *field.Error) {
	path := specPath.Child("imageName")
	if strings.HasPrefix(name, "vmi-") {
		for _, scope := range [][]ImageInfo{namespaced, cluster} {
			for _, img := range scope {
				if img.Name == name {
					return img, nil
				}
			}
		}
		return ImageInfo{}, field.NotFound(path, name)
	}
	byDisplay := func(images []ImageInfo) []ImageInfo {
		var out []ImageInfo
		for _, img := range images {
			if img.DisplayName == name {
				out = append(out, img)
			}
		}
		return out
	}
	ns, cl := byDisplay(namespaced), byDisplay(cluster)
	switch {
	case len(ns) > 1:
		return ImageInfo{}, field.Invalid(path, name, "ambiguous in namespace scope: several images have this display name")
	case len(cl) > 1:
		return ImageInfo{}, field.Invalid(path, name, "ambiguous in cluster scope: several images have this display name")
	case len(ns) == 1 && len(cl) == 1:
		return ImageInfo{}, field.Invalid(path, name, "ambiguous across namespace and cluster scopes")
	case len(ns) == 1:
		return ns[0], nil
	case len(cl) == 1:
		return cl[0], nil
	}
	return ImageInfo{}, field.NotFound(path, name)
}
