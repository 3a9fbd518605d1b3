package events

// CloudEvent types of a VirtualMachine's life that the gateway announces from the read
// model's change stream (besides TypeVirtualMachineCreated, Updated and Deleted). The
// power service announces the power events itself.
const (
	// TypeVirtualMachineConditionChanged: one condition's status, reason or message
	// changed; the data is the condition.
	TypeVirtualMachineConditionChanged = "vmop.virtualmachine.conditionchanged"
	// TypeVirtualMachineDeleting: deletion was requested (metadata.deletionTimestamp set).
	TypeVirtualMachineDeleting = "vmop.virtualmachine.deleting"
	// TypeVirtualMachineDeleteBlocked: a VM being deleted is held back by the
	// delete.check annotations named in the data.
	TypeVirtualMachineDeleteBlocked = "vmop.virtualmachine.deleteblocked"
	// TypeVirtualMachineDeleteUnblocked: the last delete.check annotation of a VM being
	// deleted was removed; the deletion proceeds. The data names the checks removed.
	TypeVirtualMachineDeleteUnblocked = "vmop.virtualmachine.deleteunblocked"
)
