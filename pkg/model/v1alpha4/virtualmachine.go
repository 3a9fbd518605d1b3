package v1alpha4

import "regexp"

// virtualMachine is how a VirtualMachine differs between v1alpha4 and v1alpha5 (as far as
// vmop models v1alpha5):
//
//   - v1alpha4 spec.cdrom is v1alpha5 spec.hardware.cdrom; a CD-ROM's controllerType,
//     controllerBusNumber and unitNumber, and the rest of spec.hardware (controllers), are
//     v1alpha5 only.
//   - v1alpha4 spec.bootOptions.bootOrder is a list of device types ("Disk"); v1alpha5
//     lists objects ({type: Disk, name: …}), whose name is v1alpha5 only.
//   - v1alpha4 spec.currentSnapshot references a VirtualMachineSnapshot; v1alpha5 names it
//     in spec.currentSnapshotName. status.currentSnapshot and status.rootSnapshots are
//     references in v1alpha4 and {type, name} in v1alpha5, where unmanaged snapshots
//     (which have no object) are v1alpha5 only.
//   - v1alpha5 only: spec.policies, spec.crypto.vTPMMode, the controller placement, disk
//     and sharing modes of volumes (spec and status), spec.volumes[].removable and
//     applicationType, status.provider, guest, hardware, policies, crypto.hasVTPM and
//     storage.usage.snapshots.
var virtualMachine = conversion{
	up:     vmUp,
	down:   vmDown,
	schema: vmSchema,
	renames: []rename{
		{regexp.MustCompile(`spec\.hardware\.cdrom`), "spec.cdrom"},
		{regexp.MustCompile(`(spec\.bootOptions\.bootOrder\[\d+\])\.type`), "$1"},
		{regexp.MustCompile(`spec\.currentSnapshotName`), "spec.currentSnapshot.name"},
	},
}

// snapshotKind is what v1alpha4 snapshot references point at.
const snapshotKind = "VirtualMachineSnapshot"

func vmUp(obj map[string]any) {
	if spec := child(obj, "spec"); spec != nil {
		if cdrom, ok := spec["cdrom"]; ok {
			delete(spec, "cdrom")
			ensure(spec, "hardware")["cdrom"] = cdrom
		}
		if boot := child(spec, "bootOptions"); boot != nil {
			boot["bootOrder"] = mapItems(boot["bootOrder"], func(v any) any {
				return map[string]any{"type": v}
			})
		}
		if ref, ok := spec["currentSnapshot"]; ok {
			delete(spec, "currentSnapshot")
			if name, _ := asMap(ref)["name"].(string); name != "" {
				spec["currentSnapshotName"] = name
			}
		}
	}
	if status := child(obj, "status"); status != nil {
		toSnapshotStatus := func(v any) any {
			return map[string]any{"type": "Managed", "name": asMap(v)["name"]}
		}
		if ref, ok := status["currentSnapshot"]; ok {
			status["currentSnapshot"] = toSnapshotStatus(ref)
		}
		status["rootSnapshots"] = mapItems(status["rootSnapshots"], toSnapshotStatus)
	}
	dropNil(child(obj, "spec"), "bootOptions", "bootOrder")
	dropNil(child(obj, "status"), "rootSnapshots")
}

func vmDown(obj map[string]any) {
	if spec := child(obj, "spec"); spec != nil {
		if cdrom, ok := child(spec, "hardware")["cdrom"]; ok {
			spec["cdrom"] = cdrom
		}
		delete(spec, "hardware")
		if boot := child(spec, "bootOptions"); boot != nil {
			boot["bootOrder"] = mapItems(boot["bootOrder"], func(v any) any { return asMap(v)["type"] })
		}
		if name, _ := spec["currentSnapshotName"].(string); name != "" {
			spec["currentSnapshot"] = snapshotRef(name)
		}
		delete(spec, "currentSnapshotName")
	}
	if status := child(obj, "status"); status != nil {
		if ref := managedSnapshotRef(status["currentSnapshot"]); ref != nil {
			status["currentSnapshot"] = ref
		} else {
			delete(status, "currentSnapshot")
		}
		var roots []any
		for _, s := range asList(status["rootSnapshots"]) {
			if ref := managedSnapshotRef(s); ref != nil {
				roots = append(roots, ref)
			}
		}
		status["rootSnapshots"] = roots
	}
	dropNil(child(obj, "spec"), "bootOptions", "bootOrder")
	dropNil(child(obj, "status"), "rootSnapshots")
}

func snapshotRef(name string) map[string]any {
	return map[string]any{"apiVersion": servedAPIVersion, "kind": snapshotKind, "name": name}
}

// managedSnapshotRef is the v1alpha4 reference of a v1alpha5 snapshot status entry; nil
// for unmanaged snapshots, which have no object to reference.
func managedSnapshotRef(v any) map[string]any {
	m := asMap(v)
	name, _ := m["name"].(string)
	if name == "" || (m["type"] != nil && m["type"] != "Managed") {
		return nil
	}
	return snapshotRef(name)
}

func vmSchema(s map[string]any) {
	spec := props(s, "spec")
	hardware := props(s, "spec", "hardware")
	if cdrom, ok := hardware["cdrom"].(map[string]any); ok {
		cdrom = deepCopy(cdrom).(map[string]any)
		deleteKeys(child(child(cdrom, "items"), "properties"), "controllerBusNumber", "controllerType", "unitNumber")
		spec["cdrom"] = cdrom
	}
	deleteKeys(spec, "hardware", "policies", "currentSnapshotName")
	deleteKeys(props(s, "spec", "crypto"), "vTPMMode")
	deleteKeys(itemProps(s, "spec", "volumes"), "removable", "applicationType",
		"controllerBusNumber", "controllerType", "diskMode", "sharingMode", "unitNumber")
	if order := child(props(s, "spec", "bootOptions"), "bootOrder"); order != nil {
		order["items"] = map[string]any{
			"description": "A device type to boot from: Disk, Network or CDRom.",
			"type":        "string",
			"enum":        []any{"Disk", "Network", "CDRom"},
		}
	}
	ref := func(desc string) map[string]any {
		r := deepCopy(spec["class"]).(map[string]any)
		r["description"] = desc
		return r
	}
	spec["currentSnapshot"] = ref("CurrentSnapshot references the VirtualMachineSnapshot to revert the VM to.")

	status := props(s, "status")
	deleteKeys(status, "provider", "guest", "hardware", "policies")
	deleteKeys(props(s, "status", "crypto"), "hasVTPM")
	deleteKeys(itemProps(s, "status", "volumes"), "controllerBusNumber", "controllerType",
		"unitNumber", "diskMode", "sharingMode")
	deleteKeys(props(s, "status", "storage", "usage"), "snapshots")
	status["currentSnapshot"] = ref("CurrentSnapshot references the snapshot the VM currently runs from.")
	if roots := child(status, "rootSnapshots"); roots != nil {
		roots["items"] = ref("A root snapshot of the VM.")
	}
}

// mapItems applies f to every item of a JSON list; nil when v is not a list.
func mapItems(v any, f func(any) any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, e := range list {
		out[i] = f(e)
	}
	return out
}

// dropNil removes a nil or empty list left at the path by a move.
func dropNil(m map[string]any, keys ...string) {
	for _, k := range keys[:len(keys)-1] {
		m = child(m, k)
	}
	last := keys[len(keys)-1]
	if v, ok := m[last]; ok && (v == nil || isEmptyList(v)) {
		delete(m, last)
	}
}

func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
