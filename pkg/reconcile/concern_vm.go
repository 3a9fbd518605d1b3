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
