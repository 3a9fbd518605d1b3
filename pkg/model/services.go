package model

// The services that own slices of VirtualMachine status (DESIGN §4). Their names appear
// in status subjects, durable consumer names and Kind.Owners.
const (
	ServicePlacement = "placement"
	ServicePower     = "power"
	ServiceStorage   = "storage"
	ServiceNetwork   = "network"
	ServiceCrypto    = "crypto"
)
