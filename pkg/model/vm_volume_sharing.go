package model

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// volumeSharingErrors is VOL-15 and VOL-16: how a volume is shared must suit its claim,
// i.e. its access modes and whether its storage class encrypts. A claim that does not
// exist (yet) is not checked; a failed lookup is the store's fault, not the caller's.
func volumeSharingErrors(r *vmReq, v *VirtualMachineVolume, ctrls map[controllerID]controller, p *field.Path) field.ErrorList {
	if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName == "" {
		return nil
	}
	claimPath := p.Child("persistentVolumeClaim", "claimName")
	pvc, found, err := r.Env.Lookup.PVC(r.New.Namespace, v.PersistentVolumeClaim.ClaimName)
	if err != nil {
		return field.ErrorList{field.InternalError(claimPath, fmt.Errorf("look up the claim: %w", err))}
	}
	if !found {
		return nil
	}
	encrypted, err := claimEncrypted(r.Env.Lookup, pvc)
	if err != nil {
		return field.ErrorList{field.InternalError(claimPath, err)}
	}
	var (
		errs      field.ErrorList
		rwx       = slices.Contains(pvc.Spec.AccessModes, AccessModeReadWriteMany)
		multi     = v.SharingMode == VolumeSharingModeMultiWriter
		clustered = v.ApplicationType == VolumeApplicationTypeOracleRAC || v.ApplicationType == VolumeApplicationTypeMicrosoftWSFC
		assigned  = v.ControllerType != "" && v.ControllerBusNumber != nil
		shared    = assigned && sharedSCSI(v, ctrls)
		busPath   = p.Child("controllerBusNumber")
		sharePath = p.Child("sharingMode")
	)
	var bus string
	if assigned {
		bus = fmt.Sprintf("%s:%d", v.ControllerType, *v.ControllerBusNumber)
	}
	if encrypted && multi {
		errs = append(errs, field.Invalid(sharePath, v.SharingMode, "a volume of an encryption storage class cannot be MultiWriter"))
	}
	if encrypted && shared {
		errs = append(errs, field.Invalid(busPath, bus, "a volume of an encryption storage class cannot sit on a shared SCSI controller"))
	}
	if !rwx && multi {
		errs = append(errs, field.Invalid(sharePath, v.SharingMode, "a MultiWriter volume needs a ReadWriteMany claim"))
	}
	if !rwx && clustered && shared {
		errs = append(errs, field.Invalid(busPath, bus, "a clustered volume without a ReadWriteMany claim cannot sit on a shared SCSI controller"))
	}
	if rwx && clustered && !multi && assigned && !shared {
		errs = append(errs, field.Invalid(sharePath, v.SharingMode,
			"a clustered volume with a ReadWriteMany claim needs MultiWriter sharing or a shared SCSI controller"))
	}
	return errs
}

// sharedSCSI tells whether the volume sits on a SCSI controller with Physical or Virtual
// sharing. A controller missing from spec.hardware counts with the sharing placement
// would create it with (CTL-3 reports that it is missing).
func sharedSCSI(v *VirtualMachineVolume, ctrls map[controllerID]controller) bool {
	if v.ControllerType != ControllerTypeSCSI {
		return false
	}
	sharing := ControllerSharingModeNone
	if c, ok := ctrls[controllerID{v.ControllerType, *v.ControllerBusNumber}]; ok {
		sharing = c.sharing
	} else if v.ApplicationType == VolumeApplicationTypeMicrosoftWSFC {
		sharing = ControllerSharingModePhysical
	}
	return sharing == ControllerSharingModePhysical || sharing == ControllerSharingModeVirtual
}

// claimEncrypted tells whether the claim's storage class is an encryption storage class.
func claimEncrypted(l Lookup, pvc *PersistentVolumeClaim) (bool, error) {
	if pvc.Spec.StorageClassName == nil {
		return false, nil
	}
	return encryptionStorageClass(l, *pvc.Spec.StorageClassName)
}
