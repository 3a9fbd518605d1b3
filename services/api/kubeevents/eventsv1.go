package kubeevents

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EventsV1 turns a stored v1 Event into its events.k8s.io/v1 shape, as kube-apiserver
// serves the one resource in both groups.
func EventsV1(v1 []byte) ([]byte, error) {
	var ev corev1.Event
	if err := json.Unmarshal(v1, &ev); err != nil {
		return nil, fmt.Errorf("decode stored event: %w", err)
	}
	out := eventsv1.Event{
		TypeMeta:                 metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta:               ev.ObjectMeta,
		EventTime:                metav1.NewMicroTime(ev.FirstTimestamp.Time),
		ReportingController:      ev.ReportingController,
		ReportingInstance:        ev.ReportingInstance,
		Reason:                   ev.Reason,
		Regarding:                ev.InvolvedObject,
		Note:                     ev.Message,
		Type:                     ev.Type,
		DeprecatedSource:         ev.Source,
		DeprecatedFirstTimestamp: ev.FirstTimestamp,
		DeprecatedLastTimestamp:  ev.LastTimestamp,
		DeprecatedCount:          ev.Count,
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.Name, err)
	}
	return b, nil
}
