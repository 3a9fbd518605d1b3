package reconcile

import "github.com/vmop/vmop/pkg/model"

// Paths of a VirtualMachine's record that the storage service owns (CONTRACTS A): the
// volumes and the storage controllers, which its schema upgrade back-fills after create.
var (
	VMVolumes     = Path{"spec", "volumes"}
	VMControllers = []Path{
		{"spec", "hardware", "ideControllers"},
		{"spec", "hardware", "nvmeControllers"},
		{"spec", "hardware", "sataControllers"},
		{"spec", "hardware", "scsiControllers"},
	}
)

// VMUpgradeStamps are the annotations storage's schema upgrade stamps on a VM.
var VMUpgradeStamps = []Path{
	{"metadata", "annotations", model.AnnotationUpgradedToBuild},
	{"metadata", "annotations", model.AnnotationUpgradedToSchema},
	{"metadata", "annotations", model.AnnotationUpgradedToFeature},
}

// VMZoneLabel is the zone label placement writes on a VM it placed (a record write that
// would bring every service back): the others read the zone in placement's slice.
var VMZoneLabel = Path{"metadata", "labels", model.LabelZone}

// UnreadUntilCreated has a VM's service read none of the inputs named while placement
// has not created the VM (and it is not being deleted): until then the service only
// waits for it. Placement may be among them: its slice saying the VM is created changes
// the concern itself, and so what the service reads.
func (ign *Ignored) UnreadUntilCreated(o Object, inputs ...string) {
	if o.Deleting() {
		return
	}
	if _, created := Placed(o); !created {
		ign.UnreadInputs = append(ign.UnreadInputs, inputs...)
	}
}
