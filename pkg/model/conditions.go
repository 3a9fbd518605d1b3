package model

// Condition types of a VirtualMachine (api-rules §8), with the service that sets each.
const (
	// ConditionReady is set by the readiness prober, only when spec.readinessProbe is given.
	ConditionReady = "Ready"

	ConditionClassReady                   = "VirtualMachineClassReady"                        // placement
	ConditionImageReady                   = "VirtualMachineImageReady"                        // placement
	ConditionResourcePolicyReady          = "VirtualMachineConditionVMSetResourcePolicyReady" // placement
	ConditionStorageReady                 = "VirtualMachineStorageReady"                      // storage
	ConditionBootstrapReady               = "VirtualMachineBootstrapReady"                    // network
	ConditionNetworkReady                 = "VirtualMachineNetworkReady"                      // network
	ConditionPlacementReady               = "VirtualMachineConditionPlacementReady"           // placement
	ConditionImageCacheReady              = "VirtualMachineConditionImageCacheReady"          // storage
	ConditionCreated                      = "VirtualMachineCreated"                           // placement
	ConditionLocationValid                = "VirtualMachineLocationValid"                     // placement
	ConditionClassConfigurationSynced     = "VirtualMachineClassConfigurationSynced"          // power
	ConditionEncryptionSynced             = "VirtualMachineEncryptionSynced"                  // crypto
	ConditionPowerStateSynced             = "VirtualMachinePowerStateSynced"                  // power
	ConditionGuestNetworkConfigSynced     = "VirtualMachineGuestNetworkConfigSynced"          // network
	ConditionTools                        = "VirtualMachineTools"                             // status watcher
	ConditionGuestCustomization           = "GuestCustomization"                              // status watcher
	ConditionGuestBootstrap               = "GuestBootstrap"                                  // status watcher
	ConditionGuestIDReconfigured          = "GuestIDReconfigured"                             // power
	ConditionReconcileReady               = "VirtualMachineReconcileReady"
	ConditionHardwareDeviceConfigVerified = "VirtualMachineHardwareDeviceConfigVerified" // storage: boot disk, advanced
	ConditionHardwareControllersVerified  = "VirtualMachineHardwareControllersVerified"
	ConditionHardwareVolumesVerified      = "VirtualMachineHardwareVolumesVerified"
	ConditionHardwareCDROMVerified        = "VirtualMachineHardwareCDROMVerified" // storage
	ConditionDiskPromotionStarted         = "VirtualMachineDiskPromotionStarted"
	ConditionDiskPromotionSynced          = "VirtualMachineDiskPromotionSynced"
	ConditionUnmanagedVolumesBackfilled   = "VirtualMachineUnmanagedVolumesBackfilled"
	ConditionUnmanagedVolumesRegistered   = "VirtualMachineUnmanagedVolumesRegistered"
	ConditionSnapshotRevertSucceeded      = "VirtualMachineSnapshotRevertSucceeded"
	ConditionBackupUpToDate               = "VirtualMachineBackupUpToDate"
)

// Condition types of VirtualMachineGroup members (api-rules §9.3); groups use ConditionReady.
const (
	ConditionGroupLinked            = "GroupLinked"
	ConditionMemberPowerStateSynced = "PowerStateSynced"
	ConditionMemberPlacementReady   = "PlacementReady"
)

// Generic reasons: a condition without a more specific reason carries its status as reason.
const (
	ReasonTrue  = "True"
	ReasonFalse = "False"
)

// Reasons of the prerequisite, placement and creation conditions.
const (
	ReasonNotFound                      = "NotFound"
	ReasonForbidden                     = "Forbidden"
	ReasonInvalid                       = "Invalid"
	ReasonInternalError                 = "InternalError"
	ReasonGetError                      = "GetError"
	ReasonNotSet                        = "NotSet"
	ReasonUnknownKind                   = "UnknownKind"
	ReasonUnknown                       = "Unknown"
	ReasonNotReady                      = "NotReady"
	ReasonNotSupported                  = "NotSupported"
	ReasonStorageClassRequired          = "StorageClassRequired"
	ReasonDatastoreNotFound             = "DatastoreNotFound"
	ReasonRequiredKeyNotFound           = "RequiredKeyNotFound"
	ReasonZoneMismatch                  = "ZoneMismatch"
	ReasonError                         = "Error"
	ReasonResourcePoolMismatch          = "ResourcePoolMismatch"
	ReasonFolderMismatch                = "FolderMismatch"
	ReasonResourcePoolAndFolderMismatch = "ResourcePoolAndFolderMismatch"
)

// Reasons of VirtualMachineClassConfigurationSynced.
const (
	ReasonClassNotFound    = "ClassNotFound"
	ReasonClassNameChanged = "ClassNameChanged"
	ReasonSameClassResize  = "SameClassResize"
	ReasonClassUpdated     = "ClassUpdated"
)

// Reasons of VirtualMachineEncryptionSynced. Several apply at once: they are joined with "And"
// in the order listed here, e.g. InvalidStateAndInvalidChanges.
const (
	ReasonEncryptionInternalError = "InternalError"
	ReasonEncryptionClassNotFound = "EncryptionClassNotFound"
	ReasonEncryptionClassInvalid  = "EncryptionClassInvalid"
	ReasonNoDefaultKeyProvider    = "NoDefaultKeyProvider"
	ReasonInvalidState            = "InvalidState"
	ReasonInvalidChanges          = "InvalidChanges"
	ReasonReconfigureError        = "ReconfigureError"
)

// Reasons of the sync conditions (power state, guest network config).
const (
	ReasonSynced    = "Synced"
	ReasonNotSynced = "NotSynced"
)

// Reasons of the guest conditions reported by the status watcher.
const (
	ReasonToolsRunning                = "VirtualMachineToolsRunning"
	ReasonToolsNotRunning             = "VirtualMachineToolsNotRunning"
	ReasonNoGuestInfo                 = "NoGuestInfo"
	ReasonGuestCustomizationIdle      = "GuestCustomizationIdle"
	ReasonGuestCustomizationPending   = "GuestCustomizationPending"
	ReasonGuestCustomizationRunning   = "GuestCustomizationRunning"
	ReasonGuestCustomizationSucceeded = "GuestCustomizationSucceeded"
	ReasonGuestCustomizationFailed    = "GuestCustomizationFailed"
)

// Reasons of the reconcile, hardware, disk, snapshot, backup and readiness conditions.
const (
	ReasonReconcilePaused                      = "VirtualMachineReconcilePaused"
	ReasonHardwareDeviceConfigMismatch         = "HardwareDeviceConfigMismatch"
	ReasonHardwareControllersMismatch          = "HardwareControllersMismatch"
	ReasonHardwareVolumesMismatch              = "HardwareVolumesMismatch"
	ReasonHardwareCDROMMismatch                = "HardwareCDROMMismatch"
	ReasonDiskPromotionPending                 = "DiskPromotionPending"
	ReasonDiskPromotionRunning                 = "DiskPromotionRunning"
	ReasonDiskPromotionTaskError               = "DiskPromotionTaskError"
	ReasonDiskPromotionTaskTransientError      = "DiskPromotionTaskTransientError"
	ReasonPending                              = "Pending"
	ReasonNoUnmanagedVolumesRegisterAnnotation = "NoUnmanagedVolumesRegisterAnnotation"
	ReasonPendingConfigUpdates                 = "PendingConfigUpdates"
	ReasonPendingRegistration                  = "PendingRegistration"
	ReasonSnapshotRevertInProgress             = "VirtualMachineSnapshotRevertInProgress"
	ReasonSnapshotRevertTaskFailed             = "VirtualMachineSnapshotRevertTaskFailed"
	ReasonSnapshotRevertInvalidVMManifest      = "VirtualMachineSnapshotRevertFailedInvalidVMManifest"
	ReasonSnapshotRevertSkipped                = "VirtualMachineSnapshotRevertSkipped"
	ReasonSnapshotRevertFailed                 = "VirtualMachineSnapshotRevertFailed"
	ReasonBackupPaused                         = "VirtualMachineBackupPaused"
	ReasonBackupFailed                         = "VirtualMachineBackupFailed"
	ReasonReady                                = "Ready"
)

// Reasons of VirtualMachineImage Ready (api-rules §9.2).
const (
	ReasonImageNotSynced                    = "VirtualMachineImageNotSynced"
	ReasonImageProviderNotReady             = "VirtualMachineImageProviderNotReady"
	ReasonImageProviderSecurityNotCompliant = "VirtualMachineImageProviderSecurityNotCompliant"
)

// Reasons of VirtualMachineGroup and member conditions (api-rules §9.3).
const (
	ReasonNotMember            = "NotMember"
	ReasonSetOwnerRefError     = "SetOwnerRefError"
	ReasonOwnerRefPatchError   = "OwnerRefPatchError"
	ReasonPowerStatePatchError = "PowerStatePatchError"
	ReasonAlreadyPlaced        = "AlreadyPlaced"
	ReasonMembersNotReady      = "MembersNotReady"
)
