package kubeevents

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// Components named as an Event's source.
const (
	componentGateway = "vmop-api"
	componentPower   = "vmop-power"
	componentDefault = "vmop"
)

// eventUIDSpace derives Event UIDs from CloudEvent ids (UUID version 5), so every gateway
// names the same event alike.
var eventUIDSpace = uuid.MustParse("6f1d9c52-4a61-4bb7-9d0e-3c2f5e1b7a10")

// Convert turns the CloudEvent stored at seq of EVENTS under subject into the v1 Event a
// Kubernetes user expects: involvedObject from the subject (its uid from the data's
// metadata, else from the id, whose first part is the object's uid by convention), and a
// reason, type, message and source per kind of event (see [describe]). stored is when
// JetStream stored it, the time of an event that carries none.
func Convert(subject string, seq uint64, stored time.Time, body []byte) (*corev1.Event, error) {
	ref, what, err := events.ParseEventSubject(subject)
	if err != nil {
		return nil, err
	}
	if ref.Namespace == "" {
		return nil, fmt.Errorf("event %s is about a cluster-scoped object: Events are namespaced", subject)
	}
	var ce events.CloudEvent
	if err := json.Unmarshal(body, &ce); err != nil {
		return nil, fmt.Errorf("event %s: not a CloudEvent: %w", subject, err)
	}
	at := stored.UTC()
	if t, err := time.Parse(time.RFC3339Nano, ce.Time); err == nil {
		at = t.UTC()
	}
	d := describe(what, ce.Data)
	kind, apiVersion := kindOf(ref.Plural)
	ts := metav1.NewTime(at)
	return &corev1.Event{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         ref.Namespace,
			Name:              fmt.Sprintf("%s.%016x", ref.Name, seq),
			UID:               types.UID(uuid.NewSHA1(eventUIDSpace, []byte(ce.ID)).String()),
			ResourceVersion:   fmt.Sprint(seq),
			CreationTimestamp: ts,
		},
		InvolvedObject: corev1.ObjectReference{
			Kind: kind, APIVersion: apiVersion, Namespace: ref.Namespace, Name: ref.Name,
			UID: types.UID(involvedUID(ce)),
		},
		Reason:              d.reason,
		Message:             d.message,
		Type:                d.typ,
		Source:              corev1.EventSource{Component: d.component},
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
		ReportingController: d.component,
	}, nil
}

// kindOf names the kind and apiVersion of a plural; an unknown plural (a kind this gateway
// does not serve) is named after it.
func kindOf(plural string) (kind, apiVersion string) {
	if k, ok := model.KindForPlural(plural); ok {
		return k.Kind, k.APIVersion()
	}
	return plural, ""
}

// involvedUID is the uid of the object the event is about: the data's metadata.uid when
// the data is the object, else the id's first part ("<uid>/<what>...").
func involvedUID(ce events.CloudEvent) string {
	var obj struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	if json.Unmarshal(ce.Data, &obj) == nil && obj.Metadata.UID != "" {
		return obj.Metadata.UID
	}
	if uid, _, ok := strings.Cut(ce.ID, "/"); ok {
		return uid
	}
	return ""
}

// description is what a Kubernetes user reads of an event.
type description struct {
	reason, message, typ, component string
}

// describe words the events vmop publishes (README, Events) as Kubernetes components
// word theirs. Any other event's data may say it itself with the string fields reason,
// message, type (Normal or Warning) and component; what it leaves out is made from
// <what>.
func describe(what string, data json.RawMessage) description {
	normal := func(reason, message string) description {
		return description{reason, message, corev1.EventTypeNormal, componentGateway}
	}
	switch what {
	case "created":
		return normal("Created", "Created"+generationOf(data))
	case "updated":
		return normal("Updated", "Spec changed"+generationOf(data))
	case "deleting":
		return normal("Deleting", "Deletion requested")
	case "deleted":
		return normal("Deleted", "Deleted")
	case "deleteblocked":
		var d struct {
			Checks map[string]string `json:"checks"`
		}
		_ = json.Unmarshal(data, &d)
		return description{"DeleteBlocked", "Deletion waits for the delete checks " + checkList(d.Checks),
			corev1.EventTypeWarning, componentGateway}
	case "deleteunblocked":
		return normal("DeleteUnblocked", "The last delete check was removed: deletion proceeds")
	case "conditionchanged":
		return conditionChanged(data)
	case "poweredon", "poweredoff", "suspended":
		return powerChanged(what, data)
	case "poweronblocked":
		var d struct {
			Checks  map[string]string `json:"checks"`
			Message string            `json:"message"`
		}
		_ = json.Unmarshal(data, &d)
		msg := "Power-on waits for the power-on checks " + checkList(d.Checks)
		return description{"PowerOnBlocked", msg, corev1.EventTypeWarning, componentPower}
	case "poweronunblocked":
		return description{"PowerOnUnblocked", "The last power-on check was removed: power-on proceeds",
			corev1.EventTypeNormal, componentPower}
	}
	return selfDescribed(what, data)
}

// conditionChanged: the reason is the condition's type, a Warning when it went False.
func conditionChanged(data json.RawMessage) description {
	var c metav1.Condition
	if err := json.Unmarshal(data, &c); err != nil || c.Type == "" {
		return description{"ConditionChanged", "A condition changed", corev1.EventTypeNormal, componentGateway}
	}
	msg := string(c.Status)
	if c.Reason != "" && c.Reason != string(c.Status) {
		msg += " (" + c.Reason + ")"
	}
	if c.Message != "" {
		msg += ": " + c.Message
	}
	typ := corev1.EventTypeNormal
	if c.Status == metav1.ConditionFalse {
		typ = corev1.EventTypeWarning
	}
	return description{c.Type, msg, typ, componentGateway}
}

// powerStates words reaching each power state: reason and message.
var powerStates = map[string][2]string{
	"poweredon":  {"PoweredOn", "Powered on"},
	"poweredoff": {"PoweredOff", "Powered off"},
	"suspended":  {"Suspended", "Suspended"},
}

// powerChanged words reaching a power state, saying when it was not vmop's doing.
func powerChanged(what string, data json.RawMessage) description {
	var d struct {
		Previous  string `json:"previousPowerState"`
		OutOfBand bool   `json:"outOfBand"`
	}
	_ = json.Unmarshal(data, &d)
	reason, msg := powerStates[what][0], powerStates[what][1]
	if d.OutOfBand {
		msg += " outside vmop (in vCenter)"
	}
	if d.Previous != "" {
		msg += ", was " + d.Previous
	}
	return description{reason, msg, corev1.EventTypeNormal, componentPower}
}

// selfDescribed reads what an event of another kind says of itself.
func selfDescribed(what string, data json.RawMessage) description {
	var d struct {
		Reason    any `json:"reason"`
		Message   any `json:"message"`
		Type      any `json:"type"`
		Component any `json:"component"`
	}
	_ = json.Unmarshal(data, &d)
	text := func(v any, fallback string) string {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
		return fallback
	}
	reason := text(d.Reason, upperFirst(what))
	typ := text(d.Type, corev1.EventTypeNormal)
	if typ != corev1.EventTypeWarning {
		typ = corev1.EventTypeNormal
	}
	return description{reason, text(d.Message, reason), typ, text(d.Component, componentDefault)}
}

func generationOf(data json.RawMessage) string {
	var obj struct {
		Metadata struct {
			Generation int64 `json:"generation"`
		} `json:"metadata"`
	}
	if json.Unmarshal(data, &obj) == nil && obj.Metadata.Generation > 0 {
		return fmt.Sprintf(" (generation %d)", obj.Metadata.Generation)
	}
	return ""
}

// checkList spells checks as component="value", sorted.
func checkList(checks map[string]string) string {
	parts := make([]string, 0, len(checks))
	for k, v := range checks {
		parts = append(parts, fmt.Sprintf("%s=%q", k, v))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
