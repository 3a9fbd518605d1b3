package v1alpha4

import (
	"regexp"

	"github.com/vmop/vmop/pkg/model"
)

// hubAPIVersion and servedAPIVersion are the apiVersion values of the two forms.
var (
	hubAPIVersion    = model.GroupVMOperator + "/" + model.VersionVMOperator
	servedAPIVersion = model.GroupVMOperator + "/" + Version
)

// ToHub converts a decoded v1alpha4 object of kind to v1alpha5 in place. Fields the
// v1alpha4 schema does not know (including v1alpha5-only ones) are removed first and
// returned as paths such as "spec.hardware", for the caller's fieldValidation to judge.
// An unserved kind is left alone.
func ToHub(kind string, obj map[string]any) (unknown []string) {
	c, ok := conversions[kind]
	if !ok {
		return nil
	}
	unknown = prune(kind, obj)
	c.up(obj)
	obj["apiVersion"] = hubAPIVersion
	return unknown
}

// FromHub converts a stored v1alpha5 object of kind to v1alpha4 in place, dropping what
// v1alpha4 cannot express. An unserved kind is left alone.
func FromHub(kind string, obj map[string]any) {
	c, ok := conversions[kind]
	if !ok {
		return
	}
	c.down(obj)
	prune(kind, obj)
	obj["apiVersion"] = servedAPIVersion
}

// Restore copies into obj (hub form, converted from a v1alpha4 write) the fields of the
// stored hub object old that v1alpha4 cannot express, so that a read-modify-write through
// v1alpha4 keeps them. Fields inside list items follow their item: by key in list-maps
// (e.g. a volume's controller placement by volume name), by position in other lists only
// while the item is otherwise unchanged; items the write removed stay removed.
func Restore(kind string, obj, old map[string]any) {
	if _, ok := conversions[kind]; !ok || old == nil {
		return
	}
	hub, ok := model.SchemaFor(kind)
	if !ok {
		return
	}
	view := deepCopy(old).(map[string]any)
	FromHub(kind, view)
	ToHub(kind, view) // what v1alpha4 shows of old, back in hub form
	restore(hub, obj, old, view)
}

// rename turns hub field paths into v1alpha4 ones wherever they occur in a text.
type rename struct {
	re   *regexp.Regexp
	repl string
}

// RenamePaths rewrites the hub field paths in an error message or field path of kind into
// the names v1alpha4 uses, e.g. spec.hardware.cdrom[0] into spec.cdrom[0].
func RenamePaths(kind, text string) string {
	for _, r := range conversions[kind].renames {
		text = r.re.ReplaceAllString(text, r.repl)
	}
	return text
}
