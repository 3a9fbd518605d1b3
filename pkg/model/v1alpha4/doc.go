// Package v1alpha4 serves vmoperator.vmware.com/v1alpha4 on top of the stored v1alpha5
// objects, as VM Operator does: v1alpha5 is the hub (stored, preferred, the only version
// admission and the services see) and v1alpha4 is converted to and from it at the gateway.
//
// Conversion works on decoded JSON objects (map[string]any), like the rest of the gateway:
//
//   - [ToHub] prunes what the v1alpha4 schema does not know (returning the paths, so that
//     the request's fieldValidation decides about them), then moves the fields whose shape
//     changed (spec.cdrom is spec.hardware.cdrom in v1alpha5, bootOrder entries are strings
//     in v1alpha4 and objects in v1alpha5, spec.currentSnapshot is a reference in v1alpha4
//     and a name in v1alpha5).
//   - [FromHub] moves them back and prunes the v1alpha5-only fields.
//   - [Restore] keeps v1alpha5-only fields across a read-modify-write through v1alpha4.
//     VM Operator keeps the whole hub object in an annotation of the down-converted object
//     for this; vmop instead copies those fields from the stored object on update, which
//     needs no annotation a client could edit or drop, and is exact because every update
//     goes through the gateway, which holds the stored object.
//
// The v1alpha4 schema (published in OpenAPI for kubectl explain and validation) is derived
// from the v1alpha5 one by the same moves, so field documentation stays in one place.
package v1alpha4
