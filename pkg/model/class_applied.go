package model

import "encoding/json"

// AppliedClass names a class whose configuration a VM has: the value of the
// last-resized-vm-class annotation (api-rules §4; D14 sets only the name) and of the
// record the VM carries in vCenter. UID and Generation tell a later change of the class
// object (same-vm-class-resize) from the one applied; empty when unknown.
type AppliedClass struct {
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
	Generation int64  `json:"generation,omitempty"`
}

// ParseAppliedClass reads an AppliedClass; ok is false for a value that names no class.
func ParseAppliedClass(s string) (c AppliedClass, ok bool) {
	if json.Unmarshal([]byte(s), &c) != nil || c.Name == "" {
		return AppliedClass{}, false
	}
	return c, true
}

// String is the JSON form, as the annotation and the VM's record hold it.
func (c AppliedClass) String() string {
	b, _ := json.Marshal(c) // strings and an integer always marshal
	return string(b)
}

// AppliedClassOf is the record of class c, named name, as applied to a VM now.
func AppliedClassOf(name string, c *VirtualMachineClass) AppliedClass {
	return AppliedClass{Name: name, UID: string(c.UID), Generation: c.Generation}
}
