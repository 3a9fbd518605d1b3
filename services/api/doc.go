// Package api is vmop's gateway: a Kubernetes-style REST API (kubectl and client-go work
// against it) that authenticates callers, admits objects (schema → defaults → validation),
// appends desired state to the SPECS stream with compare-and-swap, and answers reads and
// watches from a SQLite read model folded from SPECS and STATUS.
//
// Run is the whole program; the stack binary wires it with configuration.
package api
