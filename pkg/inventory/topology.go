package inventory

// The names below are the contract between Seed (vCenter), Objects (API) and every service and
// test: change one here and everything follows.

// Datacenter is the one datacenter holding the whole inventory.
const Datacenter = "vmop-dc"

// Zone is an availability zone: one cluster whose hosts share a zone-local datastore.
type Zone struct {
	Name      string   // value of the label topology.kubernetes.io/zone and of the zone tag
	Cluster   string   // cluster the zone maps to, tagged with the zone tag
	Datastore string   // datastore mounted on this zone's hosts only
	Hosts     []string // host names, at least two
}

// Zones are the three zones; each is a cluster tagged in ZoneTagCategory.
var Zones = []Zone{
	{Name: "zone-a", Cluster: "cluster-a", Datastore: "ds-a", Hosts: []string{"esx-a1", "esx-a2"}},
	{Name: "zone-b", Cluster: "cluster-b", Datastore: "ds-b", Hosts: []string{"esx-b1", "esx-b2"}},
	{Name: "zone-c", Cluster: "cluster-c", Datastore: "ds-c", Hosts: []string{"esx-c1", "esx-c2"}},
}

// ZoneTagCategory is the vSphere tag category whose tags name zones; a zone's tag is attached to its
// cluster, the convention of vSphere CSI topology, so zone→cluster is discoverable from vCenter.
const ZoneTagCategory = "k8s-zone"

// SharedDatastore is mounted on every host of every zone; the content libraries live on it.
const SharedDatastore = "ds-shared"

// Network is a port group VMs can attach to.
type Network struct {
	Name        string
	Distributed bool // a port group of DistributedSwitch; else a standard network on every host
}

// Networks: the first is the namespaces' default network (api-rules §0.4: `VM Network`).
var Networks = []Network{
	{Name: "VM Network"},
	{Name: "workload-network", Distributed: true},
}

// DefaultNetwork is the network of interfaces that name none.
var DefaultNetwork = Networks[0].Name

// DistributedSwitch carries the distributed port groups of Networks; every host is a member.
const DistributedSwitch = "vmop-dvs"

// KeyProvider is the key provider registered as vCenter's default; the seed document's
// EncryptionClass examples name it (`keyProvider: local`). OtherKeyProvider is a second one (the
// seed's status example names it), for classes that encrypt with another provider.
const (
	KeyProvider      = "local"
	OtherKeyProvider = "my-key-provider-id"
)

// KeyProviders are the key providers Seed registers, the default first.
var KeyProviders = []string{KeyProvider, OtherKeyProvider}

// Namespaces are the namespaces the gateway starts with; the seed document's examples use them.
var Namespaces = []string{"default", "my-namespace", "my-namespace-1"}

// ImageScope says which image kind a content library's items become.
type ImageScope string

const (
	// NamespaceScope items become a VirtualMachineImage in every namespace.
	NamespaceScope ImageScope = "Namespace"
	// ClusterScope items become one ClusterVirtualMachineImage.
	ClusterScope ImageScope = "Cluster"
)

// ContentLibrary is a local library on SharedDatastore. Each item lives in exactly one library, so
// no display name is shared between a namespace image and a cluster image (that would make
// `imageName: <display name>` ambiguous, api-rules §9.2).
type ContentLibrary struct {
	Name  string
	Scope ImageScope
}

// Library holds the namespace images, ClusterLibrary the cluster images.
var (
	Library        = ContentLibrary{Name: "vmop-images", Scope: NamespaceScope}
	ClusterLibrary = ContentLibrary{Name: "vmop-cluster-images", Scope: ClusterScope}
	Libraries      = []ContentLibrary{Library, ClusterLibrary}
)

// Content library item names, which are the images' display names (status.name).
const (
	PhotonImage    = "photonos-5-x64"   // OVF, one disk; object name SeedImageName
	MultiDiskImage = "multi-disk-image" // OVF, two disks (SCSI 0:0 20Gi, SCSI 0:1 50Gi)
	MyImage        = "my-image"         // OVF, one disk (SCSI 0:0 20Gi)
	PhotonISO      = "photonos-5-x64-iso"
	UbuntuImage    = "ubuntu-22.04" // cluster image, OVF
	UbuntuISO      = "ubuntu-22.04-live-server-iso"
	PhotonVMTX     = "photonos-5-x64-vmtx" // VM template (VMTX) made from PhotonTemplate
)

// SeedImageName is the image object name the seed document's examples use; it is pinned to
// PhotonImage (other images are named from their item ID, see vmiName).
const SeedImageName = "vmi-0a0044d7c690bcbea"

// StorageClass names a StorageClass and the SPBM policy it stands for.
type StorageClass struct {
	Name   string
	Policy string // PBM profile name; its ID becomes parameters.storagePolicyID
}

// StorageClasses exist cluster-wide and are associated with every namespace.
var StorageClasses = []StorageClass{
	{Name: "my-storage-class", Policy: "vSAN Default Storage Policy"},
	{Name: "my-encrypted-storage-class", Policy: "VM Encryption Policy"},
}

// Names of the namespaced objects that exist in every namespace.
const (
	SeedClassName        = "my-vm-class" // exactly the seed document's CPU-and-memory example
	EncryptionClassName  = "my-encryption-class"
	ComputePolicyName    = "my-compute-policy"        // Optional: applied when a VM lists it
	DefaultComputePolicy = "namespace-default-policy" // Mandatory: applied to every VM
)

// PolicyTagCategory holds one vSphere tag per ComputePolicy; the policy's TagPolicy names that tag,
// and applying the policy attaches it to the VM.
const PolicyTagCategory = "vmop-compute-policy"
