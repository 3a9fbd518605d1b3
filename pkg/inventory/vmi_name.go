package inventory

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

// itemHash is VM Operator's image ID for a content library item: the first 17 hex characters of
// the SHA-1 of the item UUID without hyphens.
func itemHash(itemID string) string {
	sum := sha1.Sum([]byte(strings.ReplaceAll(itemID, "-", "")))
	return hex.EncodeToString(sum[:])[:17]
}

// vmiName is the object name of the image of a library item: upstream's hash, taken over the
// item's stable identity (library and item name) rather than its ID, because vcsim assigns random
// item IDs on every start and the names must survive a restart of `make run`. PhotonImage is
// pinned to SeedImageName, the name the seed document's examples use.
func vmiName(lib ContentLibrary, itemName string) string {
	if lib == Library && itemName == PhotonImage {
		return SeedImageName
	}
	return "vmi-" + itemHash(itemKey(lib, itemName))
}

// providerName is the name of the ContentLibraryItem an image's spec.providerRef points at.
func providerName(lib ContentLibrary, itemName string) string {
	return "clitem-" + itemHash(itemKey(lib, itemName))
}

func itemKey(lib ContentLibrary, itemName string) string { return lib.Name + "/" + itemName }
