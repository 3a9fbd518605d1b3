package model

// Condition and reasons the placement service adds beside api-rules §8 (issue #3).
const (
	// ConditionDeleteChecksCleared is set by placement on a VM being deleted: False with
	// ReasonDeleteChecksPending, naming the checks, while any delete.check annotation
	// remains (nothing is destroyed meanwhile); True once none remains.
	ConditionDeleteChecksCleared = "VirtualMachineDeleteChecksCleared"

	// ReasonDeleteChecksPending: delete.check annotations still hold the VM back.
	ReasonDeleteChecksPending = "DeleteChecksPending"

	// ReasonCreating: VirtualMachineCreated is False while the create call runs; the
	// condition's lastTransitionTime is when it started, so a restarted placement waits
	// for that call instead of issuing a second one.
	ReasonCreating = "Creating"
)
