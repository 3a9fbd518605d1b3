package model

import (
	"encoding/json"
	"strings"
)

// accessModeShort are the access modes as kubectl prints them.
var accessModeShort = map[PersistentVolumeAccessMode]string{
	AccessModeReadWriteOnce:    "RWO",
	AccessModeReadOnlyMany:     "ROX",
	AccessModeReadWriteMany:    "RWX",
	AccessModeReadWriteOncePod: "RWOP",
}

// claimAccessModes is a claim's Access Modes cell, as Kubernetes prints it: the bound
// volume's modes abbreviated and comma-separated.
func claimAccessModes(obj []byte) any {
	var o struct {
		Status struct {
			AccessModes []PersistentVolumeAccessMode `json:"accessModes"`
		} `json:"status"`
	}
	if json.Unmarshal(obj, &o) != nil {
		return nil
	}
	out := make([]string, len(o.Status.AccessModes))
	for i, m := range o.Status.AccessModes {
		out[i] = accessModeShort[m]
		if out[i] == "" {
			out[i] = string(m)
		}
	}
	return strings.Join(out, ",")
}
