package announce

import (
	"encoding/json"
	"fmt"
)

// eventObject is a VM as its created, updated, deleting and deleted events carry it:
// without spec.bootstrap, whose inline cloud-init, Sysprep and vApp data can hold
// credentials and scripts that the subscribers of EVENTS (another NATS account) must not
// read; the VM's own readers see it through the API.
func eventObject(object []byte) (json.RawMessage, error) {
	var vm map[string]any
	if err := json.Unmarshal(object, &vm); err != nil {
		return nil, fmt.Errorf("decode VM for its event: %w", err)
	}
	spec, _ := vm["spec"].(map[string]any)
	if _, ok := spec["bootstrap"]; !ok {
		return object, nil
	}
	delete(spec, "bootstrap")
	out, err := json.Marshal(vm)
	if err != nil {
		return nil, fmt.Errorf("encode VM for its event: %w", err)
	}
	return out, nil
}
