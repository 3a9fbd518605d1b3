package events

import "slices"

// JetStream API and key-value subjects, as nats-server and nats.go spell them.
const (
	jsAPI      = "$JS.API."
	jsAck      = "$JS.ACK."
	kvStream   = "KV_"
	kvSubject  = "$KV."
	inboxRoot  = "_INBOX"
	anyToken   = "*"
	restTokens = ">"
)

// Permissions are what one NATS identity may publish and subscribe to, as allow lists
// (everything else is refused), plus subjects refused although an allow entry matches.
type Permissions struct {
	Inbox         string   // prefix of the identity's reply subjects (nats.CustomInboxPrefix)
	Publish       []string // subjects it may publish to, JetStream API requests included
	DenyPublish   []string
	Subscribe     []string
	DenySubscribe []string
}

// InboxPrefix is the prefix of an identity's reply subjects: each identity subscribes
// only below its own, so none reads another's replies (stream reads, consumer messages).
func InboxPrefix(identity string) string { return join(inboxRoot, identity) }

// EventKind is a CloudEvent type published about objects of a plural.
type EventKind struct{ Plural, Type string }

// ServiceAccess is what a VirtualMachine service does on NATS beyond what every service
// does (read SPECS and STATUS, publish its own status slices): each service declares its
// own, and its identity is allowed exactly that.
type ServiceAccess struct {
	Service   string
	Consumers []string    // names of its durable consumers
	Specs     []string    // plurals whose SPECS it appends to (e.g. placement's zone label)
	Events    []EventKind // CloudEvents it publishes
	Buckets   []string    // key-value buckets it owns
}

// Permissions returns the service identity's permissions: it reads SPECS and STATUS,
// publishes its own STATUS slices and what a declares, and manages only its own
// consumers and buckets. It can delete or purge nothing.
func (a ServiceAccess) Permissions() Permissions {
	p := Permissions{Inbox: InboxPrefix(Durable(a.Service))}
	p.Publish = append(p.Publish, join(subjectRoot, statusToken, anyToken, anyToken, anyToken, a.Service))
	for _, plural := range a.Specs {
		p.Publish = append(p.Publish, SpecFilter(plural))
	}
	for _, e := range a.Events {
		p.Publish = append(p.Publish, join(subjectRoot, eventsToken, e.Plural, anyToken, anyToken, eventWhat(e.Type)))
	}
	p.Publish = append(p.Publish, vmopStreams()...)
	p.Publish = append(p.Publish, directGet(StreamSpecs, StreamStatus)...)
	p.Publish = append(p.Publish, jsAPI+"STREAM.MSG.GET."+StreamStatus) // LastStatusFromLeader
	for _, c := range a.Consumers {
		p.Publish = append(p.Publish, consumerUse(anyToken, c)...)
	}
	buckets := append(slices.Clone(a.Buckets), LeaseBucket(a.Service)) // every service's loop leases the objects it reconciles
	p.Publish = append(p.Publish, jsAPI+"INFO")                        // nats.go reads the account's limits before a bucket's creation
	for _, b := range buckets {
		st := kvStream + b
		p.Publish = append(p.Publish,
			join(kvSubject+b, restTokens),
			jsAPI+"STREAM.CREATE."+st, jsAPI+"STREAM.UPDATE."+st)
		p.Publish = append(p.Publish, streamInfo(st)...)
		p.Publish = append(p.Publish, directGet(st)...)
	}
	p.Subscribe = []string{join(p.Inbox, restTokens)}
	return p
}

// GatewayPermissions returns the gateway's permissions: it appends to SPECS, announces on
// EVENTS, publishes STATUS slices for the service identities it authenticates (and the
// seeded inventory's), follows SPECS, STATUS and EVENTS (served as Kubernetes Events)
// with ordered consumers, and deletes the
// slices of an object once its tombstone is in SPECS. It cannot delete or purge a
// stream, nor create, change, delete, pull from or acknowledge the services' consumers.
func GatewayPermissions(services ...ServiceAccess) Permissions {
	p := Permissions{Inbox: InboxPrefix(Durable("api"))}
	p.Publish = []string{
		SpecFilter(""), StatusFilter(""), EventFilter(),
		jsAPI + "STREAM.MSG.DELETE." + StreamStatus,
	}
	p.Publish = append(p.Publish, vmopStreams()...)
	p.Publish = append(p.Publish, directGet(StreamSpecs, StreamStatus)...)
	p.Publish = append(p.Publish, jsAPI+"STREAM.MSG.GET."+StreamSpecs, jsAPI+"STREAM.MSG.GET."+StreamStatus) // CheckMark in a cluster
	for _, st := range []string{StreamSpecs, StreamStatus, StreamEvents} {
		p.Publish = append(p.Publish, consumerUse(st, anyToken)...)
		p.Publish = append(p.Publish, jsAPI+"CONSUMER.DELETE."+join(st, anyToken))
	}
	for _, s := range services {
		for _, c := range s.Consumers {
			p.DenyPublish = append(p.DenyPublish, consumerUse(anyToken, c)...)
			p.DenyPublish = append(p.DenyPublish, jsAPI+"CONSUMER.DELETE."+join(anyToken, c))
		}
	}
	p.Subscribe = []string{join(p.Inbox, restTokens)}
	return p
}

// EventsReaderPermissions returns the permissions of the events account's users, the
// outside systems: subscribe to the EVENTS subjects, and read the account's EVENTS (a
// mirror of the main account's) through durable consumers of their own. Nothing else:
// no publishing beyond those requests and acknowledgements, no stream changes.
func EventsReaderPermissions() Permissions {
	st := StreamEvents
	p := Permissions{Inbox: inboxRoot}
	p.Publish = []string{
		jsAPI + "INFO", jsAPI + "STREAM.NAMES", jsAPI + "STREAM.LIST",
		jsAPI + "STREAM.MSG.GET." + st,
		jsAPI + "CONSUMER.CREATE." + st, jsAPI + "CONSUMER.CREATE." + join(st, restTokens),
		jsAPI + "CONSUMER.DURABLE.CREATE." + join(st, anyToken),
		jsAPI + "CONSUMER.INFO." + join(st, anyToken),
		jsAPI + "CONSUMER.DELETE." + join(st, anyToken),
		jsAPI + "CONSUMER.MSG.NEXT." + join(st, anyToken),
		jsAPI + "CONSUMER.NAMES." + st, jsAPI + "CONSUMER.LIST." + st,
		jsAck + join(st, restTokens),
	}
	p.Publish = append(p.Publish, streamInfo(st)...)
	p.Subscribe = []string{EventFilter(), join(inboxRoot, restTokens)}
	return p
}

// EventFilter matches every EVENTS subject.
func EventFilter() string { return join(subjectRoot, eventsToken, restTokens) }

// vmopStreams is reading the information of vmop's streams, and creating one that is
// missing (what Setup does when a part starts before the server's owner set them up;
// a stream that exists is not changed by a create).
func vmopStreams() []string {
	var out []string
	for _, cfg := range streamConfigs(1) {
		out = append(out, jsAPI+"STREAM.INFO."+cfg.Name, jsAPI+"STREAM.CREATE."+cfg.Name)
	}
	return out
}

// streamInfo is the stream information request of each stream.
func streamInfo(streams ...string) []string {
	out := make([]string, len(streams))
	for i, st := range streams {
		out[i] = jsAPI + "STREAM.INFO." + st
	}
	return out
}

// directGet is the direct get of a message of each stream, by sequence or by subject.
func directGet(streams ...string) []string {
	var out []string
	for _, st := range streams {
		out = append(out, jsAPI+"DIRECT.GET."+st, jsAPI+"DIRECT.GET."+join(st, restTokens))
	}
	return out
}

// consumerManage is creating or deleting a consumer (stream and name may be anyToken).
func consumerManage(stream, name string) []string {
	c := join(stream, name)
	return []string{jsAPI + "CONSUMER.CREATE." + c, jsAPI + "CONSUMER.CREATE." + join(c, restTokens),
		jsAPI + "CONSUMER.DURABLE.CREATE." + c, jsAPI + "CONSUMER.DELETE." + c}
}

// consumerUse is creating or updating a consumer, reading its state, pulling its
// messages and acknowledging them (in nats-server's first ack format and in the second,
// which adds the domain and account); not deleting it.
func consumerUse(stream, name string) []string {
	c := join(stream, name)
	return slices.Concat(consumerManage(stream, name)[:3], []string{
		jsAPI + "CONSUMER.INFO." + c,
		jsAPI + "CONSUMER.MSG.NEXT." + c,
		jsAck + join(c, restTokens),
		jsAck + join(anyToken, anyToken, c, restTokens),
	})
}
