package model

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateClassMerge is CTL-10 (create): the VM service builds the VM's storage
// controllers from the class ConfigSpec, the image's disks and spec.hardware, so those
// must fit together. They cannot be merged when a source puts a controller on a bus its
// type does not have, or when the ConfigSpec and spec.hardware define the same controller
// with a different SCSI type or sharing mode (the image only says which controllers its
// disks sit on). A class or image that does not exist is not an admission error (it
// surfaces as a condition); one that cannot be read is.
func validateClassMerge(r *vmReq) field.ErrorList {
	if !r.create() {
		return nil
	}
	s := &r.New.Spec
	m := controllerMerge{}
	var errs field.ErrorList
	if s.ClassName != "" {
		class, found, err := r.Env.Lookup.Class(r.New.Namespace, s.ClassName)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(specPath.Child("className"), s.ClassName, "the class could not be read: "+err.Error()))
		case found:
			decls, err := configSpecControllers(class.Spec.ConfigSpec)
			if err != nil {
				errs = append(errs, field.Invalid(specPath.Child("className"), s.ClassName, "the class configSpec could not be read: "+err.Error()))
			}
			for _, d := range decls {
				m.add(d, "class configSpec")
			}
		}
	}
	if s.Image != nil && s.Image.Name != "" {
		img, found, err := r.Env.Lookup.Image(r.New.Namespace, *s.Image)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(specPath.Child("image"), s.Image.Name, "the image could not be read: "+err.Error()))
		case found:
			for _, d := range img.Disks {
				if d.ControllerType != "" && d.ControllerBusNumber != nil {
					m.add(controllerDecl{id: controllerID{d.ControllerType, *d.ControllerBusNumber}}, "image")
				}
			}
		}
	}
	ctrls := controllers(s.Hardware)
	ids := slices.SortedFunc(maps.Keys(ctrls), func(a, b controllerID) int {
		return cmp.Or(strings.Compare(string(a.Type), string(b.Type)), cmp.Compare(a.Bus, b.Bus))
	})
	for _, id := range ids {
		m.add(controllerDecl{id: id, c: ctrls[id], typed: true}, "spec.hardware")
	}
	for _, conflict := range m.conflicts {
		errs = append(errs, field.Invalid(hardwarePath, nil, conflict))
	}
	return errs
}

// controllerDecl is one source's statement that controller id exists; typed says whether
// the source also fixes its SCSI type and sharing mode (c).
type controllerDecl struct {
	id    controllerID
	c     controller
	typed bool
}

// controllerMerge collects the controllers of all sources and what does not fit.
type controllerMerge struct {
	merged    map[controllerID]controllerDecl
	from      map[controllerID]string
	conflicts []string
}

func (m *controllerMerge) add(d controllerDecl, source string) {
	if m.merged == nil {
		m.merged, m.from = map[controllerID]controllerDecl{}, map[controllerID]string{}
	}
	id := d.id
	if !knownControllerType(id.Type) || !busInRange(id.Type, id.Bus) {
		m.conflicts = append(m.conflicts, fmt.Sprintf("the %s puts a %s controller on bus %d, which a VM does not have", source, id.Type, id.Bus))
		return
	}
	prev, ok := m.merged[id]
	switch {
	case !ok || (!prev.typed && d.typed):
		m.merged[id], m.from[id] = d, source
	case prev.typed && d.typed && (prev.c.scsi != d.c.scsi || prev.c.sharing != d.c.sharing):
		m.conflicts = append(m.conflicts, fmt.Sprintf("the %s and the %s define %s controller %d differently", m.from[id], source, id.Type, id.Bus))
	}
}

// configSpec is the part of a vSphere VirtualMachineConfigSpec (JSON with _typeName
// discriminators) that adds storage controllers.
type configSpec struct {
	DeviceChange []struct {
		Operation string `json:"operation"`
		Device    struct {
			TypeName  string `json:"_typeName"`
			BusNumber *int32 `json:"busNumber"`
			SharedBus string `json:"sharedBus"`
		} `json:"device"`
	} `json:"deviceChange"`
}

// configSpecControllerTypes maps vSphere controller device types to ours.
var configSpecControllerTypes = map[string]struct {
	t    ControllerType
	scsi SCSIControllerType
}{
	"VirtualIDEController":         {ControllerTypeIDE, ""},
	"VirtualAHCIController":        {ControllerTypeSATA, ""},
	"VirtualSATAController":        {ControllerTypeSATA, ""},
	"VirtualNVMEController":        {ControllerTypeNVME, ""},
	"ParaVirtualSCSIController":    {ControllerTypeSCSI, SCSIControllerTypeParaVirtual},
	"VirtualBusLogicController":    {ControllerTypeSCSI, SCSIControllerTypeBusLogic},
	"VirtualLsiLogicController":    {ControllerTypeSCSI, SCSIControllerTypeLsiLogic},
	"VirtualLsiLogicSASController": {ControllerTypeSCSI, SCSIControllerTypeLsiLogicSAS},
}

// configSpecSharing maps vSphere's sharedBus values to controller sharing modes.
var configSpecSharing = map[string]ControllerSharingMode{
	"noSharing":       ControllerSharingModeNone,
	"physicalSharing": ControllerSharingModePhysical,
	"virtualSharing":  ControllerSharingModeVirtual,
}

// configSpecControllers lists the storage controllers a class ConfigSpec adds.
func configSpecControllers(raw json.RawMessage) ([]controllerDecl, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var cs configSpec
	if err := json.Unmarshal(raw, &cs); err != nil {
		return nil, fmt.Errorf("decode configSpec: %w", err)
	}
	var out []controllerDecl
	for _, ch := range cs.DeviceChange {
		kind, ok := configSpecControllerTypes[ch.Device.TypeName]
		if !ok || ch.Device.BusNumber == nil || (ch.Operation != "" && ch.Operation != "add") {
			continue
		}
		out = append(out, controllerDecl{
			id:    controllerID{kind.t, *ch.Device.BusNumber},
			c:     newController(kind.t, kind.scsi, configSpecSharing[ch.Device.SharedBus]),
			typed: true,
		})
	}
	return out, nil
}
