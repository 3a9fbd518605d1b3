package events

// CloudEvent types the storage service publishes about a PersistentVolumeClaim; each
// event's data describes itself (reason, message, type, component), as Kubernetes Events
// word them.
const (
	TypeClaimBound              = "vmop.persistentvolumeclaim.bound"
	TypeClaimProvisioningFailed = "vmop.persistentvolumeclaim.provisioningfailed"
	TypeClaimResized            = "vmop.persistentvolumeclaim.resized"
	TypeClaimResizeFailed       = "vmop.persistentvolumeclaim.resizefailed"
	TypeClaimLost               = "vmop.persistentvolumeclaim.lost"
	TypeClaimInUse              = "vmop.persistentvolumeclaim.inuse"
	TypeClaimWaiting            = "vmop.persistentvolumeclaim.waitforfirstconsumer"
)
