package model

// Well-known annotation and label keys of VirtualMachine (api-rules §4).
const (
	PowerOnCheckPrefix = "poweron.check.vmoperator.vmware.com/"
	DeleteCheckPrefix  = "delete.check.vmoperator.vmware.com/"

	AnnotationPaused              = "vmoperator.vmware.com/paused"
	LabelPaused                   = "vmoperator.vmware.com/paused"
	AnnotationCloudInitInstanceID = "vmoperator.vmware.com/cloud-init-instance-id"
	AnnotationInstanceID          = "vmoperator.vmware.com/instance-id"
	AnnotationFirstBootDone       = "virtualmachine.vmoperator.vmware.com/first-boot-done"
	AnnotationCreatedAtBuild      = "vmoperator.vmware.com/created-at-build-version"
	AnnotationCreatedAtSchema     = "vmoperator.vmware.com/created-at-schema-version"
	AnnotationUpgradedToBuild     = "vmoperator.vmware.com/upgraded-to-build-version"
	AnnotationUpgradedToSchema    = "vmoperator.vmware.com/upgraded-to-schema-version"
	AnnotationUpgradedToFeature   = "vmoperator.vmware.com/upgraded-to-feature-version"
	AnnotationLastResizedClass    = "vmoperator.vmware.com/last-resized-vm-class"
	AnnotationSameClassResize     = "vmoperator.vmware.com/same-vm-class-resize"
	AnnotationNoDefaultNIC        = "vmoperator.vmware.com/no-default-nic"
	AnnotationApplyPowerStateTime = "vmoperator.vmware.com.protected/apply-power-state-time"
	AnnotationSkipValidation      = "vmoperator.vmware.com.protected/skip-validation"
	AnnotationSkipDeletePlatform  = "vmoperator.vmware.com.protected/skip-delete-platform-resource"
	LabelZone                     = "topology.kubernetes.io/zone"
	FinalizerVirtualMachine       = "vmoperator.vmware.com/virtualmachine"
	SchemaVersion                 = "v1alpha5"
)
