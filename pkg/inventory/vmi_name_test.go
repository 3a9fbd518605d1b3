package inventory

import "testing"

func TestItemHashIsUpstreams(t *testing.T) {
	// The example of VM Operator's image documentation.
	if got := itemHash("e1968c25-dd84-4506-8dc7-9beacb6b688e"); got != "0a0044d7c690bcbea" {
		t.Errorf("itemHash = %s, want 0a0044d7c690bcbea", got)
	}
}

func TestVMINameIsStableAndDistinct(t *testing.T) {
	if got := vmiName(Library, PhotonImage); got != SeedImageName {
		t.Errorf("photon image = %s, want the pinned %s", got, SeedImageName)
	}
	seen := map[string]string{}
	for _, lib := range Libraries {
		for _, item := range []string{PhotonImage, MyImage, UbuntuImage} {
			name := vmiName(lib, item)
			if name != vmiName(lib, item) {
				t.Errorf("vmiName(%s, %s) is not stable", lib.Name, item)
			}
			if prev, dup := seen[name]; dup {
				t.Errorf("vmiName(%s, %s) = %s, same as %s", lib.Name, item, name, prev)
			}
			seen[name] = lib.Name + "/" + item
		}
	}
	if providerName(Library, MyImage) == providerName(ClusterLibrary, MyImage) {
		t.Errorf("providerName does not tell libraries apart")
	}
}
