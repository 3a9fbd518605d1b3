package events

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// CloudEvent types published to EVENTS, "vmop.<kind>.<what>" (see the
// package documentation). Events about other kinds follow the same scheme.
const (
	TypeVirtualMachineCreated    = "vmop.virtualmachine.created"
	TypeVirtualMachineUpdated    = "vmop.virtualmachine.updated"
	TypeVirtualMachineDeleted    = "vmop.virtualmachine.deleted"
	TypeVirtualMachinePoweredOn  = "vmop.virtualmachine.poweredon"
	TypeVirtualMachinePoweredOff = "vmop.virtualmachine.poweredoff"
	TypeVirtualMachineSuspended  = "vmop.virtualmachine.suspended"
)

const (
	cloudEventsVersion    = "1.0"
	contentTypeJSON       = "application/json"
	contentTypeCloudEvent = "application/cloudevents+json" // structured mode
	eventTypePrefix       = subjectRoot + "."
	sourceRoot            = "/" + subjectRoot
)

// CloudEvent is a CloudEvents 1.0 event in the JSON format, with the
// distributed-tracing extension attribute traceparent.
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Subject         string          `json:"subject,omitempty"`
	Time            string          `json:"time,omitempty"`
	DataContentType string          `json:"datacontenttype,omitempty"`
	Data            json.RawMessage `json:"data,omitempty"`
	TraceParent     string          `json:"traceparent,omitempty"`
}

// PublishEvent publishes a CloudEvent of type typ about ref with data as its
// JSON payload. The source is the object's collection ("/vmop/namespaces/<ns>/<plural>",
// or "/vmop/<plural>" for cluster-scoped kinds) and the subject its name.
//
// id must be deterministic (derived from what caused the event, e.g. the
// object's uid and sequence): it is also the Nats-Msg-Id, so a retried
// publish collapses into the first.
func PublishEvent(ctx context.Context, js jetstream.JetStream, ref Ref, typ string, id string, data any) error {
	if err := validEvent(ref, typ, id); err != nil {
		return fmt.Errorf("publish event: %w", err)
	}
	payload, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("publish event %s about %s: %w", typ, ref, err)
	}
	msg := &nats.Msg{Subject: EventSubject(ref, typ), Header: nats.Header{}}
	msg.Header.Set("Content-Type", contentTypeCloudEvent)
	ctx, span := startPublish(ctx, StreamEvents, msg.Subject, msg.Header)
	msg.Data, err = json.Marshal(CloudEvent{
		SpecVersion:     cloudEventsVersion,
		ID:              id,
		Source:          eventSource(ref),
		Type:            typ,
		Subject:         ref.Name,
		Time:            time.Now().UTC().Format(time.RFC3339Nano),
		DataContentType: contentTypeJSON,
		Data:            payload,
		TraceParent:     traceParent(ctx),
	})
	if err == nil {
		_, err = publishDeduplicated(ctx, js, msg, id)
	}
	if err != nil {
		err = fmt.Errorf("publish event %s about %s: %w", typ, ref, err)
	}
	endSpan(span, err)
	return err
}

func validEvent(ref Ref, typ, id string) error {
	if err := ref.Validate(); err != nil {
		return err
	}
	parts := strings.Split(strings.TrimPrefix(typ, eventTypePrefix), tokenSep)
	if !strings.HasPrefix(typ, eventTypePrefix) || len(parts) < 2 || !plainToken(parts[len(parts)-1]) {
		return fmt.Errorf("event type %q: %w", typ, ErrInvalidRef)
	}
	if id == "" {
		return fmt.Errorf("event %s about %s has no id", typ, ref)
	}
	return nil
}

// eventWhat is the last part of an event type, the EVENTS subject's last token.
func eventWhat(typ string) string {
	return typ[strings.LastIndex(typ, tokenSep)+1:]
}

func eventSource(r Ref) string {
	if r.Namespace == "" {
		return sourceRoot + "/" + r.Plural
	}
	return sourceRoot + "/namespaces/" + r.Namespace + "/" + r.Plural
}
