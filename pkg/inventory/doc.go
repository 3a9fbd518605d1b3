// Package inventory defines the one vSphere inventory vmop runs against and the API objects that
// describe it.
//
// The vCenter side (datacenter, zones as clusters, datastores, networks, zone tags, a native key
// provider, content libraries with real OVF and ISO items and a VM template item, and template VMs
// that images of type VM clone) is built by Seed, idempotently, in any vCenter; StartSim embeds a vcsim to build it in.
// The API side (namespaces, images, classes, storage and encryption classes, policies) is
// returned by Objects, read back from that vCenter so the gateway seeds exactly what exists.
// Every name lives in topology.go: services, tests and the seed document's examples agree on
// them.
package inventory
