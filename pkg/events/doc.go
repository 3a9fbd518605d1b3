// Package events is vmop's only door to NATS JetStream: it spells every
// subject, stream and consumer name, stores desired and observed state,
// publishes CloudEvents, consumes with per-object serialisation, and carries
// traces across all of it.
//
// # Streams and subjects
//
//	SPECS       vmop.spec.<plural>.<ns>.<name>                  desired state, 8 records per object, 1 GiB
//	STATUS      vmop.status.<plural>.<ns>.<name>.<service>      each service's status slice, newest only, 512 MiB
//	EVENTS      vmop.events.<plural>.<ns>.<name>.<what>         CloudEvents for outside systems, 7 days, 1 GiB
//	DEADLETTER  $JS.EVENT.ADVISORY.CONSUMER.{MAX_DELIVERIES.>,MSG_TERMINATED.SPECS.>}   30 days, 128 MiB
//
// A full SPECS or STATUS refuses writes; a full EVENTS or DEADLETTER drops its
// oldest messages. A tombstone rolls its object's SPECS history up to itself.
// A reader that keeps a stream position keeps its [Mark] and checks it with
// [CheckMark] before resuming.
//
// <ns> and <name> are encoded by [EncodeToken]: "." becomes "_" and cluster
// scope is "_". [Setup] creates the streams; [Durable] names consumers.
//
// # Writing
//
// [AppendSpec] is a compare-and-swap on the object's SPECS subject; the
// append is the change event. [PublishStatus] replaces a service's slice
// and does nothing when it is unchanged. Both use a Nats-Msg-Id made of the
// subject, the expected last sequence and a hash of the content, so a retry
// collapses into the first attempt and a concurrent writer gets [ErrConflict].
//
// # CloudEvents
//
// [PublishEvent] publishes CloudEvents 1.0 in the JSON format (structured
// mode, NATS header Content-Type: application/cloudevents+json):
//
//	type     vmop.<kind>.<what>, e.g. vmop.virtualmachine.poweredon (the Type* constants)
//	source   /vmop/namespaces/<ns>/<plural>, or /vmop/<plural> for cluster-scoped kinds
//	subject  the object's name
//	id       chosen by the publisher, deterministic; also the Nats-Msg-Id
//	data     JSON, datacontenttype application/json
//
// <kind> is the lower-case kind, <what> a single lower-case word, which is
// also the last token of the EVENTS subject, so an outside consumer can
// filter e.g. vmop.events.virtualmachines.*.*.poweredon.
//
// # Consuming
//
// [Consume] runs a durable pull consumer. Messages about the same object
// are handled one at a time in arrival order, different objects in
// parallel. A [Handler]'s error decides the message's fate: nil acks,
// [ErrPermanent] or [ErrMalformed] terminates, anything else is redelivered
// with a growing delay until MaxDeliver is exhausted. A termination is logged;
// exhausted messages and terminated SPECS messages end in DEADLETTER (the
// server terminates every STATUS message a newer slice replaced before its
// consumer acknowledged it, which is no failure).
//
// # Identities
//
// [GatewayPermissions], [ServiceAccess.Permissions] and [EventsReaderPermissions] are the
// allow lists of the NATS identities the stack generates: the gateway writes SPECS, each
// service publishes only its own STATUS slices and uses only its own consumers, outside
// systems read only EVENTS, from an account of their own whose EVENTS mirrors the main
// account's ([EventsShares], [SetupEventsMirror]). None may delete or purge a stream.
//
// # Tracing
//
// Every publish starts a PRODUCER span and writes W3C trace context into the
// message headers under lower-case keys (traceparent, tracestate); Consume
// starts a CONSUMER span "<durable> process" under it for each message. The
// tracer provider and propagator are the global ones set by main.
package events
