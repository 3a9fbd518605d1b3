package events

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Outside systems read EVENTS from an account of their own, which sees nothing else of
// vmop's: its EVENTS stream mirrors the main account's (so they bind durable consumers to
// it as to any stream), and the EVENTS subjects are shared for plain subscribers.
const (
	mirrorAPIPrefix     = "$JS.vmop.API"      // the main account's consumer API, seen from the events account
	mirrorDeliverPrefix = "vmop.eventsmirror" // where the mirror's consumer delivers, shared with the events account
	jsFlowControl       = "$JS.FC"
)

// Share is a subject the main account exports and the events account imports.
type Share struct {
	Subject string
	Local   string // its name in the events account; "" means Subject
	Service bool   // requests answered in the main account, rather than a stream of messages
}

// EventsShares are the subjects the main account shares with the events account: the
// EVENTS subjects, and what the events account's mirror needs of the main account
// (creating its consumer on EVENTS, the consumer's deliveries and flow control). The
// events account's users may publish to none of the services (EventsReaderPermissions).
func EventsShares() []Share {
	create := "CONSUMER.CREATE." + StreamEvents
	return []Share{
		{Subject: EventFilter()},
		{Subject: join(mirrorDeliverPrefix, restTokens)},
		{Subject: jsAPI + create, Local: join(mirrorAPIPrefix, create), Service: true},
		{Subject: jsAPI + join(create, restTokens), Local: join(mirrorAPIPrefix, create, restTokens), Service: true},
		{Subject: join(jsFlowControl, restTokens), Service: true},
	}
}

// SetupEventsMirror creates the events account's EVENTS stream, a mirror of the main
// account's through EventsShares, or updates it to this package's configuration. js is
// a connection to the events account allowed to manage its streams.
func SetupEventsMirror(ctx context.Context, js jetstream.JetStream) error {
	err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name:        StreamEvents,
		Description: "vmop CloudEvents for outside systems: a mirror of the main account's EVENTS",
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      eventsMaxAge,
		Storage:     jetstream.FileStorage,
		Replicas:    1,
		Mirror: &jetstream.StreamSource{
			Name:     StreamEvents,
			External: &jetstream.ExternalStream{APIPrefix: mirrorAPIPrefix, DeliverPrefix: mirrorDeliverPrefix},
		},
	})
	if err != nil {
		return fmt.Errorf("set up the events account's mirror of %s: %w", StreamEvents, err)
	}
	return nil
}
