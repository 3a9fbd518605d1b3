package model

import "k8s.io/apimachinery/pkg/util/validation/field"

// TEMPORARY stubs owned by the helper implementing power, identity, immutability, image,
// class, storage class, crypto, bootstrap, annotations, hardware version, readiness probe,
// boot options, snapshots and affinity (and D10, D14, D15, D17). Each is replaced by the
// real rule in its own file; this file is deleted when all are.

func validateZoneLabel(*vmReq) field.ErrorList          { return nil }
func validateImage(*vmReq) field.ErrorList              { return nil }
func validateClassName(*vmReq) field.ErrorList          { return nil }
func validateStorageClass(*vmReq) field.ErrorList       { return nil }
func validateCrypto(*vmReq) field.ErrorList             { return nil }
func validateBootstrap(*vmReq) field.ErrorList          { return nil }
func validateBootstrapProviders(*vmReq) field.ErrorList { return nil }
func validateReadinessProbe(*vmReq) field.ErrorList     { return nil }
func validateBootDiskCapacity(*vmReq) field.ErrorList   { return nil }
func validatePowerState(*vmReq) field.ErrorList         { return nil }
func validateNextRestartTime(*vmReq) field.ErrorList    { return nil }
func validateAnnotations(*vmReq) field.ErrorList        { return nil }
func validatePausedLabel(*vmReq) field.ErrorList        { return nil }
func validateHardwareVersion(*vmReq) field.ErrorList    { return nil }
func validateCheckAnnotations(*vmReq) field.ErrorList   { return nil }
func validateApplyPowerTime(*vmReq) field.ErrorList     { return nil }
func validateBootOptions(*vmReq) field.ErrorList        { return nil }
func validateSnapshot(*vmReq) field.ErrorList           { return nil }
func validateGroupName(*vmReq) field.ErrorList          { return nil }
func validateAffinity(*vmReq) field.ErrorList           { return nil }
func validateBiosUUIDFormat(*vmReq) field.ErrorList     { return nil }
func validateUpgradeGuard(*vmReq) field.ErrorList       { return nil }
func validateImmutable(*vmReq) field.ErrorList          { return nil }

func defaultEncryptionClass(*VirtualMachine, VMEnv) *field.Error { return nil }
func defaultVirtualMachineUpdate(_, _ *VirtualMachine, _ VMEnv) *field.Error {
	return nil
}
