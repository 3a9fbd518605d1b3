package announce

import (
	"encoding/json"
	"fmt"

	"github.com/vmop/vmop/services/api/readmodel"
)

// eventObject is a VM as its created, updated, deleting and deleted events carry it:
// without spec.bootstrap, whose inline cloud-init, Sysprep and vApp data can hold
// credentials and scripts that the subscribers of EVENTS (another NATS account) must not
// read; the VM's own readers see it through the API. Its resourceVersion is the object's
// version alone, as every gateway replica has it: the watch event's adds where this
// gateway's read model stood.
func eventObject(object []byte) (json.RawMessage, error) {
	var vm map[string]any
	if err := json.Unmarshal(object, &vm); err != nil {
		return nil, fmt.Errorf("decode VM for its event: %w", err)
	}
	changed := false
	if meta, ok := vm["metadata"].(map[string]any); ok {
		if rv, ok := meta["resourceVersion"].(string); ok && readmodel.ObjectVersion(rv) != rv {
			meta["resourceVersion"], changed = readmodel.ObjectVersion(rv), true
		}
	}
	if spec, ok := vm["spec"].(map[string]any); ok {
		if _, ok := spec["bootstrap"]; ok {
			delete(spec, "bootstrap")
			changed = true
		}
	}
	if !changed {
		return object, nil
	}
	out, err := json.Marshal(vm)
	if err != nil {
		return nil, fmt.Errorf("encode VM for its event: %w", err)
	}
	return out, nil
}
