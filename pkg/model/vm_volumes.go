package model

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var volumesPath = specPath.Child("volumes")

// validateVolumes is VOL-1..16 (api-rules §7.7). Our own services are trusted with
// volumes, and on update nothing is checked until the VM service has upgraded the stored
// object (its back-fill writes volumes these rules would refuse).
func validateVolumes(r *vmReq) field.ErrorList {
	if r.Env.ServiceIdentity || (!r.create() && !upgraded(r.Old, r.Env)) {
		return nil
	}
	var oldVolumes []VirtualMachineVolume
	if r.Old != nil {
		oldVolumes = r.Old.Spec.Volumes
	}
	stored := map[string]*VirtualMachineVolume{}
	for i := range oldVolumes {
		if _, dup := stored[oldVolumes[i].Name]; !dup {
			stored[oldVolumes[i].Name] = &oldVolumes[i]
		}
	}
	errs := volumeNameErrors(r.New, stored)
	errs = append(errs, volumeRemovalErrors(r.New.Spec.Volumes, oldVolumes)...)
	hwChanged := r.create() || !equality.Semantic.DeepEqual(r.New.Spec.Hardware, r.Old.Spec.Hardware)
	ctrls := controllers(r.New.Spec.Hardware)
	for i := range r.New.Spec.Volumes {
		v, p := &r.New.Spec.Volumes[i], volumesPath.Index(i)
		was := stored[v.Name]
		if was != nil {
			errs = append(errs, volumeImmutableErrors(v, was, p)...)
		}
		errs = append(errs, volumePlacementRequired(r.create(), v, p)...)
		errs = append(errs, volumeApplicationErrors(v, ctrls, p)...)
		// Sharing is checked only when the request touches it, so that a claim changed
		// behind the VM's back does not block unrelated updates.
		if was == nil || hwChanged || !equality.Semantic.DeepEqual(*v, *was) {
			errs = append(errs, volumeSharingErrors(r, v, ctrls, p)...)
		}
	}
	return errs
}

// volumeNameErrors is VOL-1..7: names and claims present, unique and well formed.
func volumeNameErrors(vm *VirtualMachine, stored map[string]*VirtualMachineVolume) field.ErrorList {
	var errs field.ErrorList
	names, claims := map[string]bool{}, map[string]bool{}
	for i, v := range vm.Spec.Volumes {
		p := volumesPath.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names[v.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), v.Name))
		}
		if v.Name != "" {
			names[v.Name] = true
			// Names the VM service back-filled before this rule are kept as they are.
			if _, had := stored[v.Name]; !had && len(k8svalidation.IsDNS1123Label(v.Name)) > 0 {
				errs = append(errs, field.Invalid(p.Child("name"), v.Name, "a new volume name must be a DNS-1123 label"))
			}
			if len(k8svalidation.IsDNS1123Subdomain(vm.Name+"-"+v.Name)) > 0 {
				errs = append(errs, field.Invalid(p.Child("name"), v.Name, "<vm name>-<volume name> must be a DNS-1123 subdomain"))
			}
		}
		pvc := v.PersistentVolumeClaim
		if pvc == nil {
			continue
		}
		cp := p.Child("persistentVolumeClaim")
		switch {
		case pvc.ClaimName == "":
			errs = append(errs, field.Required(cp.Child("claimName"), ""))
		case claims[pvc.ClaimName]:
			errs = append(errs, field.Duplicate(cp.Child("claimName"), pvc.ClaimName))
		default:
			claims[pvc.ClaimName] = true
		}
		if pvc.ReadOnly {
			errs = append(errs, field.NotSupported(cp.Child("readOnly"), true, []string{"false"}))
		}
	}
	return errs
}

// volumeRemovalErrors is VOL-8 and VOL-9: stored volumes that may not go away.
func volumeRemovalErrors(volumes, oldVolumes []VirtualMachineVolume) field.ErrorList {
	kept := map[string]bool{}
	for _, v := range volumes {
		kept[v.Name] = true
	}
	var errs field.ErrorList
	for j, v := range oldVolumes {
		if !kept[v.Name] && v.Removable != nil && !*v.Removable {
			errs = append(errs, field.Forbidden(volumesPath.Index(j), "a volume with removable false cannot be removed"))
		}
	}
	for _, v := range oldVolumes {
		if _, _, placed := placement(v.ControllerType, v.ControllerBusNumber, v.UnitNumber); !kept[v.Name] && v.PersistentVolumeClaim == nil && placed {
			errs = append(errs, field.Forbidden(volumesPath, fmt.Sprintf("image disk volume %q cannot be removed", v.Name)))
		}
	}
	return errs
}

// volumeImmutableErrors is VOL-10: a volume keeps its application, placement and modes
// once they are set. A value the stored object lacked may appear: update defaulting (D12,
// D18) completes modes and placement (api-rules §11 #15), which is no change of a volume.
func volumeImmutableErrors(v, was *VirtualMachineVolume, p *field.Path) field.ErrorList {
	fields := []struct {
		name     string
		new, old any
	}{
		{"applicationType", v.ApplicationType, was.ApplicationType},
		{"controllerType", v.ControllerType, was.ControllerType},
		{"controllerBusNumber", v.ControllerBusNumber, was.ControllerBusNumber},
		{"unitNumber", v.UnitNumber, was.UnitNumber},
		{"diskMode", v.DiskMode, was.DiskMode},
		{"sharingMode", v.SharingMode, was.SharingMode},
	}
	var errs field.ErrorList
	for _, f := range fields {
		if !isZero(f.old) && !equality.Semantic.DeepEqual(f.new, f.old) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.new, "field is immutable"))
		}
	}
	return errs
}

// volumePlacementRequired is VOL-11 on create (type and bus come together) and VOL-12 on
// update (placement defaulting has filled all three, or could not).
func volumePlacementRequired(create bool, v *VirtualMachineVolume, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if create {
		if v.ControllerType == "" && (v.ControllerBusNumber != nil || v.UnitNumber != nil) {
			errs = append(errs, field.Required(p.Child("controllerType"), "needed when controllerBusNumber or unitNumber is set"))
		}
		if v.ControllerBusNumber == nil && (v.ControllerType != "" || v.UnitNumber != nil) {
			errs = append(errs, field.Required(p.Child("controllerBusNumber"), "needed when controllerType or unitNumber is set"))
		}
		return errs
	}
	if v.UnitNumber == nil {
		errs = append(errs, field.Required(p.Child("unitNumber"), "no free unit could be assigned"))
	}
	if v.ControllerType == "" {
		errs = append(errs, field.Required(p.Child("controllerType"), "no controller could be assigned"))
	}
	if v.ControllerBusNumber == nil {
		errs = append(errs, field.Required(p.Child("controllerBusNumber"), "no controller could be assigned"))
	}
	return errs
}

// volumeApplicationErrors is VOL-13 and VOL-14: the modes clustered applications need.
func volumeApplicationErrors(v *VirtualMachineVolume, ctrls map[controllerID]controller, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch v.ApplicationType {
	case VolumeApplicationTypeOracleRAC:
		if v.SharingMode != VolumeSharingModeMultiWriter {
			errs = append(errs, field.Invalid(p.Child("sharingMode"), v.SharingMode, "an OracleRAC volume needs sharingMode MultiWriter"))
		}
		if v.DiskMode != VolumeDiskModeIndependentPersistent {
			errs = append(errs, field.Invalid(p.Child("diskMode"), v.DiskMode, "an OracleRAC volume needs diskMode IndependentPersistent"))
		}
	case VolumeApplicationTypeMicrosoftWSFC:
		if v.DiskMode != VolumeDiskModeIndependentPersistent {
			errs = append(errs, field.Invalid(p.Child("diskMode"), v.DiskMode, "a MicrosoftWSFC volume needs diskMode IndependentPersistent"))
		}
		if v.ControllerType != "" && v.ControllerBusNumber != nil {
			if c, ok := ctrls[controllerID{v.ControllerType, *v.ControllerBusNumber}]; ok && c.sharing != ControllerSharingModePhysical {
				errs = append(errs, field.Invalid(p.Child("applicationType"), v.ApplicationType,
					"a MicrosoftWSFC volume needs a controller with Physical sharing"))
			}
		}
	}
	return errs
}

// isZero reports an unset field: a nil pointer or an empty string-typed value.
func isZero(v any) bool {
	rv := reflect.ValueOf(v)
	return !rv.IsValid() || rv.IsZero()
}
