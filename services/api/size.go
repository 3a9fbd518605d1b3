package api

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// An object is stored as one SPECS message, and its created, updated, deleting and
// deleted events carry it again inside a CloudEvent, together with its status; each must
// fit in one NATS message (the server's max_payload, 1 MiB by default). Admission keeps
// a sixteenth of the payload for the event's envelope and headers and the status the
// services add, so that an object it accepts can also be announced.
const eventReserveDivisor = 16

// maxObjectBytes is the largest object (JSON, without status) the gateway stores.
func (s *server) maxObjectBytes() int {
	payload := s.specs.js.Conn().MaxPayload()
	return int(payload - payload/eventReserveDivisor)
}

// checkSize refuses, with 413 as Kubernetes answers an object too large for etcd, an
// object whose record or event would not fit in a NATS message. statusBytes is the
// size of the status the services reported so far, which its events carry too.
func (s *server) checkSize(obj map[string]any, statusBytes int) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode object: %w", err)
	}
	if size, limit := len(body)+statusBytes, s.maxObjectBytes(); size > limit {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"the object is %d bytes of JSON with its status; at most %d fit in a NATS message together with its event", size, limit))
	}
	return nil
}

// storedStatus is the status t's object has in the read model; nil when it has none yet
// (not folded yet: checkSize's reserve covers a status that new).
func (s *server) storedStatus(t target) json.RawMessage {
	stored, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name)
	if err != nil {
		return nil
	}
	var parts struct {
		Status json.RawMessage `json:"status"`
	}
	if json.Unmarshal(stored.JSON, &parts) != nil || string(parts.Status) == "null" {
		return nil
	}
	return parts.Status
}

// payloadTooLarge turns NATS' refusal of a message too large into a 413: the last guard
// behind checkSize (headers, a status written through the gateway).
func payloadTooLarge(err error) error {
	if errors.Is(err, nats.ErrMaxPayload) {
		return apierrors.NewRequestEntityTooLargeError("the object does not fit in a NATS message")
	}
	return nil
}
