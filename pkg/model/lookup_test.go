package model

// fakeLookup answers VirtualMachine rules' questions from fixed data: rules are pure
// logic, so their table tests need no store. The gateway's real Lookup (over its read
// model) is exercised by the API tests.
type fakeLookup struct {
	nsImages, clusterImages []ImageInfo
	storageClasses          map[string]*StorageClass
	encryptionClasses       map[string][]EncryptionClass          // by namespace
	pvcs                    map[string]*PersistentVolumeClaim     // by "ns/name"
	classes                 map[string]*VirtualMachineClass       // by "ns/name"
	images                  map[string]*VirtualMachineImageStatus // by "ns/kind/name"
}

func (f *fakeLookup) Images(string) ([]ImageInfo, []ImageInfo, error) {
	return f.nsImages, f.clusterImages, nil
}

func (f *fakeLookup) StorageClass(name string) (*StorageClass, bool, error) {
	sc, ok := f.storageClasses[name]
	return sc, ok, nil
}

func (f *fakeLookup) EncryptionClasses(ns string) ([]EncryptionClass, error) {
	return f.encryptionClasses[ns], nil
}

func (f *fakeLookup) PVC(ns, name string) (*PersistentVolumeClaim, bool, error) {
	p, ok := f.pvcs[ns+"/"+name]
	return p, ok, nil
}

func (f *fakeLookup) Class(ns, name string) (*VirtualMachineClass, bool, error) {
	c, ok := f.classes[ns+"/"+name]
	return c, ok, nil
}

func (f *fakeLookup) Image(ns string, ref ImageRef) (*VirtualMachineImageStatus, bool, error) {
	s, ok := f.images[ns+"/"+ref.Kind+"/"+ref.Name]
	return s, ok, nil
}
