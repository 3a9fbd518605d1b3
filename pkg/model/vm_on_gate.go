package model

import "strings"

// onGate is the on-gate G of api-rules §0.4 (PWR-7): an update of a VM that was and stays
// desired PoweredOn and is not held back by a power-on check. Under G what the running
// guest sees is frozen (PWR-8, CD-8, CD-9, BOOT-10).
func onGate(r *vmReq) bool {
	if r.Old == nil || r.Old.Spec.PowerState != PowerStateOn || r.New.Spec.PowerState != PowerStateOn {
		return false
	}
	for k := range r.Old.Annotations {
		if strings.HasPrefix(k, PowerOnCheckPrefix) {
			return false
		}
	}
	return true
}
