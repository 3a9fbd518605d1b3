package model

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVolumeRules(t *testing.T) {
	var (
		invalid, forbidden, required = field.ErrorTypeInvalid, field.ErrorTypeForbidden, field.ErrorTypeRequired
		duplicate, unsupported       = field.ErrorTypeDuplicate, field.ErrorTypeNotSupported
		vol0                         = "spec.volumes[0]"
	)
	volumes := func(vs ...VirtualMachineVolume) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.Volumes = vs }
	}
	scsi := func(buses ...SCSIControllerSpec) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { devHardware(vm).SCSIControllers = buses }
	}
	both := func(fs ...func(*VirtualMachine)) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			for _, f := range fs {
				f(vm)
			}
		}
	}
	app := func(v VirtualMachineVolume, a VolumeApplicationType, disk VolumeDiskMode, sharing VolumeSharingMode) VirtualMachineVolume {
		v.ApplicationType, v.DiskMode, v.SharingMode = a, disk, sharing
		return v
	}
	rac := func(claim string) VirtualMachineVolume {
		return app(devVolume("rac", claim), VolumeApplicationTypeOracleRAC, VolumeDiskModeIndependentPersistent, VolumeSharingModeMultiWriter)
	}
	wsfc := func(claim string, bus int32) VirtualMachineVolume {
		v := app(devVolume("wsfc", claim), VolumeApplicationTypeMicrosoftWSFC, VolumeDiskModeIndependentPersistent, VolumeSharingModeNone)
		return devPlaced(v, ControllerTypeSCSI, bus, 0)
	}
	physical := SCSIControllerSpec{BusNumber: 1, SharingMode: ControllerSharingModePhysical}
	plainSCSI0 := SCSIControllerSpec{BusNumber: 0}
	// upgraded stores a back-filled VM carrying vs on SCSI controller 0.
	upgraded := func(vs ...VirtualMachineVolume) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			devUpgraded(vm)
			vm.Spec.Volumes = vs
			devHardware(vm).SCSIControllers = []SCSIControllerSpec{{BusNumber: 0, SharingMode: ControllerSharingModeNone, Type: SCSIControllerTypeParaVirtual}}
		}
	}
	data0 := devPlaced(devVolume("data", "claim-rwo"), ControllerTypeSCSI, 0, 0)
	fixed := data0
	fixed.Removable = devPtr(false)
	imageDisk := devPlaced(devVolume("my-vm-1a2b3c4d", ""), ControllerTypeSCSI, 0, 1)
	instance := devVolume("inst", "inst-claim")
	instance.PersistentVolumeClaim.InstanceVolumeClaim = &InstanceVolumeClaimVolumeSource{StorageClass: "gold", Size: resource.MustParse("8Gi")}
	relabel := func(vm *VirtualMachine) { vm.Labels = map[string]string{"app": "web"} }
	longName := func(vm *VirtualMachine) {
		vm.Name = strings.Repeat("v", 250)
		devNetwork(vm).HostName = "web"
		vm.Annotations = map[string]string{AnnotationNoDefaultNIC: ""}
	}

	runDevCases(t, []devCase{
		{name: "VOL-1 named volume", vm: volumes(devVolume("data", "claim-rwo")), code: 200},
		{name: "VOL-1 volume without name", vm: volumes(devVolume("", "claim-rwo")), code: 422,
			errs: []devErr{{required, vol0 + ".name"}}},
		{name: "VOL-2 two names", vm: volumes(devVolume("a", "claim-rwo"), devVolume("b", "claim-rwx")), code: 200},
		{name: "VOL-2 same name twice (stage 1 list-map key)", vm: volumes(devVolume("a", "claim-rwo"), devVolume("a", "claim-rwx")), code: 422,
			errs: []devErr{{duplicate, "spec.volumes[1].name"}}},
		{name: "VOL-3 new name that is no DNS label", vm: volumes(devVolume("data.disk", "claim-rwo")), code: 422,
			errs: []devErr{{invalid, vol0 + ".name"}}},
		{name: "VOL-3 stored name that is no DNS label is kept", old: upgraded(devPlaced(devVolume("data.disk", "claim-rwo"), ControllerTypeSCSI, 0, 0)),
			vm: relabel, code: 200},
		{name: "VOL-4 composed name that is no DNS subdomain", vm: both(longName, volumes(devVolume("data", "claim-rwo"))), code: 422,
			errs: []devErr{{invalid, vol0 + ".name"}}},
		{name: "VOL-4 long VM name without volumes", vm: longName, code: 200},
		{name: "VOL-5 distinct claims", vm: volumes(devVolume("a", "claim-rwo"), devVolume("b", "claim-enc")), code: 200},
		{name: "VOL-5 same claim twice", vm: volumes(devVolume("a", "claim-rwo"), devVolume("b", "claim-rwo")), code: 422,
			errs: []devErr{{duplicate, "spec.volumes[1].persistentVolumeClaim.claimName"}}},
		{name: "VOL-6 claim with a name", vm: volumes(devVolume("a", "claim-rwo")), code: 200},
		{name: "VOL-6 claim without name", vm: func(vm *VirtualMachine) {
			v := devVolume("a", "")
			v.PersistentVolumeClaim = &PersistentVolumeClaimVolumeSource{}
			vm.Spec.Volumes = []VirtualMachineVolume{v}
		}, code: 422, errs: []devErr{{required, vol0 + ".persistentVolumeClaim.claimName"}}},
		{name: "VOL-7 claim not read-only", vm: volumes(devVolume("a", "claim-rwo")), code: 200},
		{name: "VOL-7 read-only claim", vm: func(vm *VirtualMachine) {
			v := devVolume("a", "claim-rwo")
			v.PersistentVolumeClaim.ReadOnly = true
			vm.Spec.Volumes = []VirtualMachineVolume{v}
		}, code: 422, errs: []devErr{{unsupported, vol0 + ".persistentVolumeClaim.readOnly"}}},
		{name: "VOL-8 removable volume removed", old: upgraded(data0), vm: volumes(), code: 200},
		{name: "VOL-8 non-removable volume removed", old: upgraded(fixed), vm: volumes(), code: 422,
			errs: []devErr{{forbidden, vol0}}},
		{name: "VOL-9 image disk kept", old: upgraded(data0, imageDisk), vm: volumes(data0, imageDisk), code: 200},
		{name: "VOL-9 image disk removed", old: upgraded(data0, imageDisk), vm: volumes(data0), code: 422,
			errs: []devErr{{forbidden, "spec.volumes"}}},
		{name: "VOL-10 removable changed", old: upgraded(data0), code: 200,
			vm: func(vm *VirtualMachine) { vm.Spec.Volumes[0].Removable = devPtr(false) }},
		{name: "VOL-10 disk mode and unit changed", old: upgraded(data0), code: 422,
			vm: func(vm *VirtualMachine) {
				vm.Spec.Volumes[0].DiskMode = VolumeDiskModeNonPersistent
				vm.Spec.Volumes[0].UnitNumber = devPtr(int32(3))
			},
			errs: []devErr{{invalid, vol0 + ".unitNumber"}, {invalid, vol0 + ".diskMode"}}},
		{name: "VOL-11 type and bus together on create", code: 200, vm: func(vm *VirtualMachine) {
			v := devVolume("a", "claim-rwo")
			v.ControllerType, v.ControllerBusNumber = ControllerTypeNVME, devPtr(int32(0))
			vm.Spec.Volumes = []VirtualMachineVolume{v}
		}},
		{name: "VOL-11 unit without type and bus on create", code: 422, vm: func(vm *VirtualMachine) {
			v := devVolume("a", "claim-rwo")
			v.UnitNumber = devPtr(int32(1))
			vm.Spec.Volumes = []VirtualMachineVolume{v}
		}, errs: []devErr{{required, vol0 + ".controllerType"}, {required, vol0 + ".controllerBusNumber"}}},
		{name: "VOL-12 new volume placed by defaulting", old: upgraded(), vm: volumes(devVolume("data", "claim-rwo")), code: 200},
		{name: "VOL-12 no free unit on the named controller", code: 422,
			old: both(upgraded(), cdroms(true, cdromAt("cd1", ControllerTypeIDE, 0, 0), cdromAt("cd2", ControllerTypeIDE, 0, 1))),
			vm: func(vm *VirtualMachine) {
				v := devVolume("data", "claim-rwo")
				v.ControllerType, v.ControllerBusNumber = ControllerTypeIDE, devPtr(int32(0))
				vm.Spec.Volumes = []VirtualMachineVolume{v}
			},
			errs: []devErr{{required, vol0 + ".unitNumber"}}},
		{name: "VOL-13 OracleRAC with its modes", vm: volumes(rac("claim-rwx")), code: 200},
		{name: "VOL-13 OracleRAC with other modes", code: 422,
			vm:   volumes(app(devVolume("rac", "claim-rwx"), VolumeApplicationTypeOracleRAC, VolumeDiskModePersistent, VolumeSharingModeNone)),
			errs: []devErr{{invalid, vol0 + ".sharingMode"}, {invalid, vol0 + ".diskMode"}}},
		{name: "VOL-14 MicrosoftWSFC on a physically shared controller", vm: both(scsi(physical), volumes(wsfc("claim-missing", 1))), code: 200},
		{name: "VOL-14 MicrosoftWSFC with another disk mode on an unshared controller", code: 422, vm: both(scsi(plainSCSI0), volumes(
			app(wsfc("claim-missing", 0), VolumeApplicationTypeMicrosoftWSFC, VolumeDiskModePersistent, VolumeSharingModeNone))),
			errs: []devErr{{invalid, vol0 + ".diskMode"}, {invalid, vol0 + ".applicationType"}}},
		{name: "VOL-15 plain volume of an encryption storage class", vm: volumes(devVolume("data", "claim-enc")), code: 200},
		{name: "VOL-15 MultiWriter volume of an encryption storage class", vm: volumes(rac("claim-enc-rwx")), code: 422,
			errs: []devErr{{invalid, vol0 + ".sharingMode"}}},
		{name: "VOL-15 encrypted volume on a shared controller", vm: both(scsi(physical), volumes(wsfc("claim-enc-rwx", 1))), code: 422,
			errs: []devErr{{invalid, vol0 + ".controllerBusNumber"}}},
		{name: "VOL-16 MultiWriter volume of a ReadWriteMany claim", code: 200,
			vm: volumes(app(devVolume("data", "claim-rwx"), "", VolumeDiskModePersistent, VolumeSharingModeMultiWriter))},
		{name: "VOL-16 MultiWriter volume of a ReadWriteOnce claim", code: 422,
			vm:   volumes(app(devVolume("data", "claim-rwo"), "", VolumeDiskModePersistent, VolumeSharingModeMultiWriter)),
			errs: []devErr{{invalid, vol0 + ".sharingMode"}}},
		{name: "VOL-16 clustered ReadWriteOnce volume on a shared controller", vm: both(scsi(physical), volumes(wsfc("claim-rwo", 1))), code: 422,
			errs: []devErr{{invalid, vol0 + ".controllerBusNumber"}}},
		{name: "VOL-16 clustered ReadWriteMany volume neither MultiWriter nor shared", vm: both(scsi(plainSCSI0), volumes(wsfc("claim-rwx", 0))), code: 422,
			errs: []devErr{{invalid, vol0 + ".applicationType"}, {invalid, vol0 + ".sharingMode"}}},
		{name: "VOL-16 not re-checked when neither volume nor hardware changes", code: 200, vm: relabel,
			old: upgraded(app(data0, "", VolumeDiskModePersistent, VolumeSharingModeMultiWriter))},
		{name: "VOL-16 re-checked when the hardware changes", code: 422,
			old: upgraded(app(data0, "", VolumeDiskModePersistent, VolumeSharingModeMultiWriter)),
			vm: func(vm *VirtualMachine) {
				devHardware(vm).NVMEControllers = []NVMEControllerSpec{{BusNumber: 0, SharingMode: ControllerSharingModeNone}}
			},
			errs: []devErr{{invalid, vol0 + ".sharingMode"}}},
		{name: "VOL skipped for service identities", vm: volumes(devVolume("", "claim-rwo")), code: 200,
			env: func(env *VMEnv) { privileged(env); env.ServiceIdentity = true }},
		{name: "VOL skipped on update while the stored VM is not upgraded", code: 200,
			old: func(vm *VirtualMachine) { vm.Spec.Volumes = []VirtualMachineVolume{devVolume("a.b", "claim-rwo")} }, vm: relabel},
		{name: "VOL-17 instance volume added by a privileged user", vm: volumes(instance), env: privileged, code: 200},
		{name: "VOL-17 instance volume added by a user", vm: volumes(instance), code: 422,
			errs: []devErr{{forbidden, "spec.volumes"}}},
		{name: "VOL-17 instance volume kept by a user", old: func(vm *VirtualMachine) { vm.Spec.Volumes = []VirtualMachineVolume{instance} },
			vm: relabel, code: 200},
		{name: "VOL-17 instance volume removed by a user", old: func(vm *VirtualMachine) { vm.Spec.Volumes = []VirtualMachineVolume{instance} },
			vm: volumes(), code: 422, errs: []devErr{{forbidden, "spec.volumes"}}},
	})
}

func TestVolumeModeDefaults(t *testing.T) {
	vols := []VirtualMachineVolume{
		{Name: "plain"},
		{Name: "rac", ApplicationType: VolumeApplicationTypeOracleRAC},
		{Name: "wsfc", ApplicationType: VolumeApplicationTypeMicrosoftWSFC},
		{Name: "given", DiskMode: VolumeDiskModeIndependentNonPersistent},
	}
	want := []VirtualMachineVolume{
		{Name: "plain", DiskMode: VolumeDiskModePersistent, SharingMode: VolumeSharingModeNone},
		{Name: "rac", ApplicationType: VolumeApplicationTypeOracleRAC, DiskMode: VolumeDiskModeIndependentPersistent, SharingMode: VolumeSharingModeMultiWriter},
		{Name: "wsfc", ApplicationType: VolumeApplicationTypeMicrosoftWSFC, DiskMode: VolumeDiskModeIndependentPersistent, SharingMode: VolumeSharingModeNone},
		{Name: "given", DiskMode: VolumeDiskModeIndependentNonPersistent, SharingMode: VolumeSharingModeNone},
	}
	for i := range want {
		want[i].Removable = devPtr(true) // D1
	}
	runDevCases(t, []devCase{
		{name: "D12 modes follow the application type on create", code: 200,
			vm: func(vm *VirtualMachine) { vm.Spec.Volumes = append([]VirtualMachineVolume(nil), vols...) },
			check: func(t *testing.T, vm *VirtualMachine) {
				if diff := cmp.Diff(want, vm.Spec.Volumes); diff != "" {
					t.Errorf("volumes (-want +got):\n%s", diff)
				}
			}},
		{name: "D12 modes of volumes added on update", code: 200, old: func(*VirtualMachine) {},
			vm: func(vm *VirtualMachine) { vm.Spec.Volumes = append([]VirtualMachineVolume(nil), vols...) },
			check: func(t *testing.T, vm *VirtualMachine) {
				if diff := cmp.Diff(want, vm.Spec.Volumes); diff != "" {
					t.Errorf("volumes (-want +got):\n%s", diff)
				}
			}},
	})
}
