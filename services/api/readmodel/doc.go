// Package readmodel is the gateway's query side: a SQLite projection of the SPECS and
// STATUS streams that answers get, list and watch.
//
// [Store.Fold] reads both streams with ordered consumers and applies their messages in
// batches, each in one transaction together with the stream checkpoints, so a restart
// resumes exactly after the last applied message (effectively-once, no acks). An object's
// row holds its latest spec record with the merged status of its uid-matching slices and
// metadata.resourceVersion "<specSeq>.<statusSeq>". Everything is a pure function of the
// streams, so deleting the database file and folding again yields identical objects.
//
// Every visible change is appended to a bounded change log; [Store.Watch] replays it from
// a resourceVersion and then follows live changes without a gap.
//
// One process owns a database file: Fold is its only writer. Reads use a separate
// read-only pool and never block the fold (SQLite WAL).
package readmodel
