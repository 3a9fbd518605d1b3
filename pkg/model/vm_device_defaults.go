package model

// defaultVolumeModes is D12: each volume's empty disk and sharing modes follow its
// application type (OracleRAC: IndependentPersistent, MultiWriter; MicrosoftWSFC:
// IndependentPersistent, None; none: Persistent, None). It runs on create and update.
func defaultVolumeModes(vm *VirtualMachine) {
	for i := range vm.Spec.Volumes {
		v := &vm.Spec.Volumes[i]
		disk, sharing := VolumeDiskModePersistent, VolumeSharingModeNone
		switch v.ApplicationType {
		case VolumeApplicationTypeOracleRAC:
			disk, sharing = VolumeDiskModeIndependentPersistent, VolumeSharingModeMultiWriter
		case VolumeApplicationTypeMicrosoftWSFC:
			disk = VolumeDiskModeIndependentPersistent
		}
		if v.DiskMode == "" {
			v.DiskMode = disk
		}
		if v.SharingMode == "" {
			v.SharingMode = sharing
		}
	}
}

// placeDevices is D18 and D19 on update: D12 again (new volumes need their modes before
// placement), CD-ROM image kinds, then, once the VM service has upgraded the object, the
// placement of volumes and CD-ROMs.
func placeDevices(vm, old *VirtualMachine, env VMEnv) {
	defaultVolumeModes(vm)
	defaultCdromImageKinds(vm, old)
	if !upgraded(vm, env) {
		return
	}
	PlaceVolumes(&vm.Spec)
	PlaceCdroms(&vm.Spec)
}

// defaultCdromImageKinds is the first part of D19: on update an empty CD-ROM image kind
// becomes VirtualMachineImage only where the stored CD-ROM with the same image name had
// that kind; otherwise it stays empty and CD-2 reports it.
func defaultCdromImageKinds(vm, old *VirtualMachine) {
	if vm.Spec.Hardware == nil || old == nil || old.Spec.Hardware == nil {
		return
	}
	for i := range vm.Spec.Hardware.Cdrom {
		img := &vm.Spec.Hardware.Cdrom[i].Image
		if img.Kind != "" {
			continue
		}
		for _, o := range old.Spec.Hardware.Cdrom {
			if o.Image.Name == img.Name && o.Image.Kind == imageKindNamespaced {
				img.Kind = imageKindNamespaced
				break
			}
		}
	}
}
