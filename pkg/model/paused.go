package model

// Who paused a VirtualMachine: the values of LabelPaused (api-rules §4).
const (
	PausedByDevOps = "devops" // the paused annotation
	PausedByAdmin  = "admin"  // ExtraConfig vmservice.virtualmachine.pause=true in vSphere
	PausedByBoth   = "both"
)

// PausedLabel is the paused label's value for a VM paused by DevOps (the annotation)
// and/or an admin (in vSphere); "" for one paused by nobody, which has no label.
func PausedLabel(byDevOps, byAdmin bool) string {
	switch {
	case byDevOps && byAdmin:
		return PausedByBoth
	case byAdmin:
		return PausedByAdmin
	case byDevOps:
		return PausedByDevOps
	}
	return ""
}

// PausedByAdminLabel reports whether a paused label's value says an admin paused the VM.
func PausedByAdminLabel(label string) bool { return label == PausedByAdmin || label == PausedByBoth }
