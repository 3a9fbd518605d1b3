package model

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The kinds of image a VM or CD-ROM may reference.
const (
	imageKindNamespaced = "VirtualMachineImage"
	imageKindCluster    = "ClusterVirtualMachineImage"
)

var cdromPath = hardwarePath.Child("cdrom")

// validateCdrom is CD-1..9 (api-rules §7.8): CD-ROM images, placement (checked on create
// as given, on update once the stored object is upgraded and placement defaulting has
// run), and what may not change while the VM is on (on-gate G).
func validateCdrom(r *vmReq) field.ErrorList {
	cdroms := hardwareOf(r.New).Cdrom
	var errs field.ErrorList
	if len(cdroms) > 0 {
		if r.New.Spec.GuestID == "" {
			errs = append(errs, field.Required(specPath.Child("guestID"), "a VM with CD-ROMs needs a guestID"))
		}
		images := map[string]bool{}
		for i, c := range cdroms {
			p := cdromPath.Index(i).Child("image")
			if c.Image.Kind != imageKindNamespaced && c.Image.Kind != imageKindCluster {
				errs = append(errs, field.NotSupported(p.Child("kind"), c.Image.Kind, []string{imageKindNamespaced, imageKindCluster}))
			}
			if images[c.Image.Name] {
				errs = append(errs, field.Duplicate(p.Child("name"), c.Image.Name))
			}
			images[c.Image.Name] = true
		}
		switch {
		case r.create():
			errs = append(errs, cdromPlacementOnCreate(cdroms)...)
		case upgraded(r.Old, r.Env):
			errs = append(errs, cdromPlacementOnUpdate(cdroms)...)
		}
	}
	if onGate(r) {
		errs = append(errs, cdromFrozenErrors(r)...)
	}
	return errs
}

// cdromPlacementOnCreate is CD-4 (type and bus come together) and CD-5 for CD-ROMs whose
// placement is complete; the rest is placed at deploy time.
func cdromPlacementOnCreate(cdroms []VirtualMachineCdromSpec) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cdroms {
		p := cdromPath.Index(i)
		if c.ControllerType != "" && c.ControllerBusNumber == nil {
			errs = append(errs, field.Required(p.Child("controllerBusNumber"), "needed when controllerType is set"))
		}
		if c.ControllerType == "" && c.ControllerBusNumber != nil {
			errs = append(errs, field.Required(p.Child("controllerType"), "needed when controllerBusNumber is set"))
		}
		if _, _, set := placement(c.ControllerType, c.ControllerBusNumber, c.UnitNumber); set {
			errs = append(errs, cdromRangeErrors(c, p)...)
		}
	}
	return errs
}

// cdromPlacementOnUpdate is CD-6 (placement complete after defaulting), CD-5 and CD-7 (no
// two CD-ROMs on the same unit).
func cdromPlacementOnUpdate(cdroms []VirtualMachineCdromSpec) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cdroms {
		p := cdromPath.Index(i)
		missing := false
		for _, f := range []struct {
			name  string
			unset bool
		}{
			{"controllerType", c.ControllerType == ""},
			{"controllerBusNumber", c.ControllerBusNumber == nil},
			{"unitNumber", c.UnitNumber == nil},
		} {
			if f.unset {
				missing = true
				errs = append(errs, field.Required(p.Child(f.name), "no free controller slot could be assigned"))
			}
		}
		if !missing {
			errs = append(errs, cdromRangeErrors(c, p)...)
		}
	}
	used := slots{}
	for i, c := range cdroms {
		if id, u, set := placement(c.ControllerType, c.ControllerBusNumber, c.UnitNumber); set {
			if used.taken(id, u) {
				errs = append(errs, field.Duplicate(cdromPath.Index(i).Child("unitNumber"), u))
			}
			used.take(id, u)
		}
	}
	return errs
}

// cdromRangeErrors is CD-5: CD-ROMs sit on IDE or SATA controllers, at valid buses and units.
func cdromRangeErrors(c VirtualMachineCdromSpec, p *field.Path) field.ErrorList {
	t := c.ControllerType
	if !cdromControllerType(t) {
		return field.ErrorList{field.NotSupported(p.Child("controllerType"), t, []string{string(ControllerTypeIDE), string(ControllerTypeSATA)})}
	}
	var errs field.ErrorList
	if bus := *c.ControllerBusNumber; !busInRange(t, bus) {
		errs = append(errs, field.Invalid(p.Child("controllerBusNumber"), bus, fmt.Sprintf("must be between 0 and %d for %s controllers", maxControllers(t)-1, t)))
	}
	if unit, units := *c.UnitNumber, controllerUnits(t, ""); unit < 0 || unit >= units {
		errs = append(errs, field.Invalid(p.Child("unitNumber"), unit, fmt.Sprintf("must be between 0 and %d on %s controllers", units-1, t)))
	}
	return errs
}

// cdromFrozenErrors is CD-8 and CD-9: under G no CD-ROM is added or removed and none
// changes its image; once the VM exists (its power state is observed) and the stored
// object is upgraded, none moves either. Connecting and guest control stay mutable.
func cdromFrozenErrors(r *vmReq) field.ErrorList {
	const detail = "cannot change while the VM is desired powered on"
	cdroms, old := hardwareOf(r.New).Cdrom, hardwareOf(r.Old).Cdrom
	if len(cdroms) != len(old) {
		return field.ErrorList{field.Forbidden(cdromPath, "CD-ROMs cannot be added or removed while the VM is desired powered on")}
	}
	present := map[string]bool{}
	for _, c := range cdroms {
		present[c.Name] = true
	}
	stored := map[string]VirtualMachineCdromSpec{}
	var errs field.ErrorList
	for _, o := range old {
		stored[o.Name] = o
		if !present[o.Name] {
			errs = append(errs, field.Forbidden(cdromPath.Child("name"), fmt.Sprintf("CD-ROM %q cannot be removed while the VM is desired powered on", o.Name)))
		}
	}
	for i, c := range cdroms {
		o, ok := stored[c.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(cdromPath.Index(i).Child("name"), "CD-ROMs cannot be added while the VM is desired powered on"))
		case c.Image != o.Image:
			errs = append(errs, field.Forbidden(cdromPath.Index(i).Child("image"), detail))
		}
	}
	if r.Env.ObservedPower == "" || !upgraded(r.Old, r.Env) {
		return errs
	}
	for i, c := range cdroms {
		o, ok := stored[c.Name]
		if !ok {
			continue
		}
		p := cdromPath.Index(i)
		if c.ControllerType != o.ControllerType {
			errs = append(errs, field.Forbidden(p.Child("controllerType"), detail))
		}
		if !equality.Semantic.DeepEqual(c.ControllerBusNumber, o.ControllerBusNumber) {
			errs = append(errs, field.Forbidden(p.Child("controllerBusNumber"), detail))
		}
		if !equality.Semantic.DeepEqual(c.UnitNumber, o.UnitNumber) {
			errs = append(errs, field.Forbidden(p.Child("unitNumber"), detail))
		}
	}
	return errs
}
