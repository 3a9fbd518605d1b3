package kubeevents

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// tableColumns are kube-apiserver's columns for Events: kubectl get events shows those of
// priority 0 (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE), -o wide all.
var tableColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: "Time since the event was last seen."},
	{Name: "Type", Type: "string", Description: "Normal or Warning."},
	{Name: "Reason", Type: "string", Description: "Why the event happened, in one word."},
	{Name: "Object", Type: "string", Description: "The object the event is about."},
	{Name: "Subobject", Type: "string", Priority: 1, Description: "The part of the object the event is about."},
	{Name: "Source", Type: "string", Priority: 1, Description: "The component that reported the event."},
	{Name: "Message", Type: "string", Description: "What happened, for a human."},
	{Name: "First Seen", Type: "string", Priority: 1, Description: "Time since the event was first seen."},
	{Name: "Count", Type: "string", Priority: 1, Description: "How often the event happened."},
	{Name: "Name", Type: "string", Priority: 1, Description: "Name of the event."},
}

// Table renders v1 Events as a meta.k8s.io/v1 Table, as kube-apiserver prints them.
func Table(items [][]byte, meta metav1.ListMeta, now time.Time) (*metav1.Table, error) {
	t := &metav1.Table{
		TypeMeta:          metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"},
		ListMeta:          meta,
		ColumnDefinitions: tableColumns,
		Rows:              []metav1.TableRow{},
	}
	for _, raw := range items {
		var ev corev1.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("decode stored event: %w", err)
		}
		object := strings.ToLower(ev.InvolvedObject.Kind)
		if ev.InvolvedObject.Name != "" {
			object += "/" + ev.InvolvedObject.Name
		}
		partial, err := json.Marshal(metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
			ObjectMeta: ev.ObjectMeta,
		})
		if err != nil {
			return nil, fmt.Errorf("encode row metadata: %w", err)
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells: []any{
				since(ev.LastTimestamp, now), ev.Type, ev.Reason, object, ev.InvolvedObject.FieldPath,
				ev.Source.Component, strings.TrimSpace(ev.Message), since(ev.FirstTimestamp, now), int64(ev.Count), ev.Name,
			},
			Object: runtime.RawExtension{Raw: partial},
		})
	}
	return t, nil
}

func since(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
