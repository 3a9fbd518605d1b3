package events

// CloudEvent types of the power-on checks (poweron.check.vmoperator.vmware.com/*
// annotations): a VM desired PoweredOn stays off while any remains.
const (
	// TypeVirtualMachinePowerOnBlocked: power-on waits for the checks named in the data.
	TypeVirtualMachinePowerOnBlocked = "vmop.virtualmachine.poweronblocked"
	// TypeVirtualMachinePowerOnUnblocked: the last check was removed; power-on may proceed.
	TypeVirtualMachinePowerOnUnblocked = "vmop.virtualmachine.poweronunblocked"
)
