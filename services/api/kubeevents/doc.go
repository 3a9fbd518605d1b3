// Package kubeevents serves the EVENTS stream as Kubernetes Events (core v1 and
// events.k8s.io/v1), so kubectl describe shows an object's events and kubectl get events
// lists and watches them.
//
// [Store.Fold] follows EVENTS with an ordered consumer and turns each CloudEvent into a v1
// Event ([Convert]), kept in a SQLite table indexed by namespace and involved object for
// [Retention]. An Event never changes once made, so the table is its own change log: an
// Event's resourceVersion is its EVENTS sequence, a list's is the last sequence folded,
// and a watch from a resourceVersion replays the rows after it, then follows live.
//
// The table is a projection of the stream's last [Retention]: it is made anew at every
// start, folding that window again, so it has no checkpoint to verify or migrate.
package kubeevents
