// Package model holds the API objects vmop serves and the registry of their kinds.
//
// The types mirror the JSON of VM Operator's vmoperator.vmware.com/v1alpha5 API (plus
// encryption.vmware.com/v1alpha1, vsphere.policy.vmware.com/v1alpha1 and the few core
// Kubernetes kinds the API needs), so YAML written for VM Operator decodes unchanged.
// Fields that exist only in later upstream versions are deliberately absent: the gateway
// prunes them as unknown fields.
//
// Doc comments double as the API documentation: the schema generator turns the first
// sentences into OpenAPI descriptions (what `kubectl explain` prints) and the
// `+kubebuilder:` / `+list…` marker lines into validation, defaults and list semantics.
//
// The package is data only: it imports the standard library and k8s.io/apimachinery, and
// does no I/O.
package model
