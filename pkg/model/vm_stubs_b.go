package model

import "k8s.io/apimachinery/pkg/util/validation/field"

// TEMPORARY stubs owned by the helper implementing network, host names, volumes,
// controllers and CD-ROMs (and D12, D18, D19). Each is replaced by the real rule in its
// own file; this file is deleted when all are.

func validateNetwork(*vmReq) field.ErrorList          { return nil }
func validateNetworkImmutable(*vmReq) field.ErrorList { return nil }
func validateHostName(*vmReq) field.ErrorList         { return nil }
func validateVolumes(*vmReq) field.ErrorList          { return nil }
func validateInstanceVolumes(*vmReq) field.ErrorList  { return nil }
func validateClassMerge(*vmReq) field.ErrorList       { return nil }
func validateCdrom(*vmReq) field.ErrorList            { return nil }
func validateControllers(*vmReq) field.ErrorList      { return nil }

func defaultVolumeModes(*VirtualMachine)         {}
func placeDevices(_, _ *VirtualMachine, _ VMEnv) {} // D18, D19 (update)
