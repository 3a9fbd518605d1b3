// Package api is vmop's gateway: a Kubernetes-style REST API (kubectl and client-go work
// against it) that authenticates callers, admits objects (schema → defaults → validation),
// appends desired state to the SPECS stream with compare-and-swap, and answers reads and
// watches from a SQLite read model folded from SPECS and STATUS.
//
// This package is the HTTP surface (routing, verbs, watch, patch) and the wiring. The
// other parts are packages of their own: readmodel, openapi, admission and auth (used
// here through small interfaces), announce, finalize and quota (which declare the little
// they use of the read model and of SPECS).
//
// Run is the whole program; the stack binary wires it with configuration.
package api
