package model

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NamespaceSettings are the gateway's per-namespace settings (api-rules §0.4).
type NamespaceSettings struct {
	NetworkProvider   string   // Named ("" means Named), VDS, NSX-T or VPC
	DefaultNetwork    string   // the Named provider's network, e.g. "VM Network"
	RestrictedNetwork bool     // RP-3
	StorageClasses    []string // storage classes associated with the namespace; nil = every class
	Zones             []string // zones known to the gateway (ANN-8)
}

// Lookup is what VirtualMachine rules read beyond the object; the gateway answers from
// its read model. An error is the store's fault (500/503), never the caller's.
type Lookup interface {
	// Images lists the VirtualMachineImages of a namespace and every ClusterVirtualMachineImage.
	Images(namespace string) (namespaced, cluster []ImageInfo, err error)
	// StorageClass returns the named StorageClass, found false when absent.
	StorageClass(name string) (sc *StorageClass, found bool, err error)
	// EncryptionClasses lists a namespace's EncryptionClasses.
	EncryptionClasses(namespace string) ([]EncryptionClass, error)
	// PVC returns a PersistentVolumeClaim of the namespace, found false when absent.
	PVC(namespace, name string) (pvc *PersistentVolumeClaim, found bool, err error)
	// Class returns a VirtualMachineClass of the namespace, found false when absent.
	Class(namespace, name string) (class *VirtualMachineClass, found bool, err error)
	// Image returns the status of the image a ref names in the namespace, found false when absent.
	Image(namespace string, ref ImageRef) (status *VirtualMachineImageStatus, found bool, err error)
}

// VMEnv is everything VirtualMachine defaulting and validation know besides the objects.
type VMEnv struct {
	Privileged      bool // api-rules §0.3
	ServiceIdentity bool // one of vmop's own services
	UpgradeExempt   bool // system:masters or a service identity (ANN-7, CTL-11)
	BuildVersion    string
	Now             func() time.Time
	NewUUID         func() string
	Namespace       NamespaceSettings
	// ObservedPower is status.powerState of the stored object, "" when unknown (PWR-10..12).
	ObservedPower PowerState
	Lookup        Lookup
}

// vmReq is one admission of a VirtualMachine: Old is nil on create.
type vmReq struct {
	New, Old *VirtualMachine
	Env      VMEnv
}

func (r *vmReq) create() bool { return r.Old == nil }

type vmRule func(r *vmReq) field.ErrorList

// The rule groups in the order of api-rules §5.3: errors are reported in this order.
var (
	vmCreateRules = []vmRule{
		validateZoneLabel,        // ANN-8
		validateImage,            // IMG
		validateClassName,        // CLS
		validateStorageClass,     // CRY-0/1
		validateCrypto,           // CRY-2/3
		validateBootstrap,        // BS
		validateNetwork,          // NET
		validateVolumes,          // VOL
		validateInstanceVolumes,  // VOL-17
		validateReadinessProbe,   // RP
		validateBootDiskCapacity, // HW-4
		validatePowerState,       // PWR-1 (create)
		validateNextRestartTime,  // PWR-4 (create)
		validateAnnotations,      // ANN-1..4, ANN-9
		validateFastDeploy,       // the clone mode of a VM image
		validatePausedLabel,      // ANN-5
		validateHostName,         // HN
		validateHardwareVersion,  // HW-1 (create)
		validateClassMerge,       // CTL-10
		validateCdrom,            // CD
		validateControllers,      // CTL
		validateCheckAnnotations, // ANN-6
		validateApplyPowerTime,   // PWR-9
		validateTrySoftTimeout,   // power.vmop.dev/trysoft-timeout
		validateBootOptions,      // BOOT
		validateSnapshot,         // SNAP
		validateGroupName,        // AFF-1
		validateAffinity,         // AFF-2..6
		validateBiosUUIDFormat,   // ID-3
	}
	vmUpdateRules = []vmRule{
		validateUpgradeGuard,       // ANN-7, CTL-11
		validateImmutable,          // IMM-1..5, ID-4, ID-5, NET-15..18
		validatePowerState,         // PWR-2, PWR-3, PWR-8 (G), PWR-10..12
		validateCrypto,             // CRY-2/3
		validateZoneLabel,          // ANN-8
		validateBootstrapProviders, // BS-9
		validateBootstrap,          // BS
		validateNetwork,            // NET
		validateVolumes,            // VOL
		validateInstanceVolumes,    // VOL-17
		validateReadinessProbe,     // RP
		validateBootDiskCapacity,   // HW-4
		validateNextRestartTime,    // PWR-5/6, PWR-10
		validateAnnotations,        // ANN-1..4, ANN-9
		validateHardwareVersion,    // HW-1..3
		validatePausedLabel,        // ANN-5
		validateHostName,           // HN
		validateCdrom,              // CD
		validateControllers,        // CTL
		validateCheckAnnotations,   // ANN-6
		validateApplyPowerTime,     // PWR-9
		validateTrySoftTimeout,     // power.vmop.dev/trysoft-timeout
		validateBootOptions,        // BOOT
		validateSnapshot,           // SNAP
		validateGroupName,          // AFF-1
	}
)

// ValidateVirtualMachine is stage 3 for VirtualMachines (api-rules §7): every applicable
// rule on the defaulted object, all errors together. old is nil on create.
func ValidateVirtualMachine(vm, old *VirtualMachine, env VMEnv) field.ErrorList {
	r := &vmReq{New: vm, Old: old, Env: env}
	rules := vmCreateRules
	if old != nil {
		rules = vmUpdateRules
	}
	var errs field.ErrorList
	for _, rule := range rules {
		errs = append(errs, rule(r)...)
	}
	return errs
}

// DefaultVirtualMachine is stage 2 for VirtualMachines (api-rules §6): the create rules
// D2–D13 or the update rules D14–D19 (D1, the schema defaults, has run before). It
// returns the one denial that ends the request with 403, or nil.
func DefaultVirtualMachine(vm, old *VirtualMachine, env VMEnv) *field.Error {
	if old == nil {
		return defaultVirtualMachineCreate(vm, env)
	}
	return defaultVirtualMachineUpdate(vm, old, env)
}
