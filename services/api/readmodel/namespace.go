package readmodel

import (
	"encoding/json"

	"github.com/vmop/vmop/pkg/model"
)

// namespaceStatus is the status kube-apiserver gives a Namespace itself, which no service
// reports: phase Active, Terminating once its deletion is requested. Other kinds have none.
func (rec specRecord) namespaceStatus() json.RawMessage {
	if string(rec.fields["apiVersion"]) != `"v1"` || string(rec.fields["kind"]) != `"Namespace"` {
		return nil
	}
	phase := model.NamespaceActive
	if rec.deletionRequested {
		phase = model.NamespaceTerminating
	}
	return json.RawMessage(`{"phase":"` + phase + `"}`)
}
