package model

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// placed is a volume that only says where it sits, for comparing placements.
type placed struct {
	Name string
	Type ControllerType
	Bus  *int32
	Unit *int32
}

func placements(vs []VirtualMachineVolume) []placed {
	out := []placed{}
	for _, v := range vs {
		out = append(out, placed{v.Name, v.ControllerType, v.ControllerBusNumber, v.UnitNumber})
	}
	return out
}

func at(name string, t ControllerType, bus, unit int32) placed { return placed{name, t, &bus, &unit} }

func TestPlaceVolumes(t *testing.T) {
	plain := func(name string) VirtualMachineVolume { return VirtualMachineVolume{Name: name} }
	typed := func(name string, t ControllerType, bus *int32) VirtualMachineVolume {
		return VirtualMachineVolume{Name: name, ControllerType: t, ControllerBusNumber: bus}
	}
	wsfc := VirtualMachineVolume{Name: "wsfc", ApplicationType: VolumeApplicationTypeMicrosoftWSFC}
	none := ControllerSharingModeNone
	pv := SCSIControllerTypeParaVirtual
	tests := []struct {
		name   string
		spec   VirtualMachineSpec
		want   []placed
		wantHW *VirtualMachineHardwareSpec // nil: not compared
	}{
		{
			name: "D18 unplaced volumes go to a new ParaVirtual SCSI controller",
			spec: VirtualMachineSpec{Volumes: []VirtualMachineVolume{plain("a"), plain("b")}},
			want: []placed{at("a", ControllerTypeSCSI, 0, 0), at("b", ControllerTypeSCSI, 0, 1)},
			wantHW: &VirtualMachineHardwareSpec{SCSIControllers: []SCSIControllerSpec{
				{BusNumber: 0, SharingMode: none, Type: pv}}},
		},
		{
			name: "D18 unit 7 of SCSI is skipped",
			spec: VirtualMachineSpec{
				Hardware: &VirtualMachineHardwareSpec{SCSIControllers: []SCSIControllerSpec{{BusNumber: 0}}},
				Volumes: []VirtualMachineVolume{
					devPlaced(plain("u0"), ControllerTypeSCSI, 0, 0), devPlaced(plain("u1"), ControllerTypeSCSI, 0, 1),
					devPlaced(plain("u2"), ControllerTypeSCSI, 0, 2), devPlaced(plain("u3"), ControllerTypeSCSI, 0, 3),
					devPlaced(plain("u4"), ControllerTypeSCSI, 0, 4), devPlaced(plain("u5"), ControllerTypeSCSI, 0, 5),
					devPlaced(plain("u6"), ControllerTypeSCSI, 0, 6), plain("next"),
				},
			},
			want: []placed{at("u0", ControllerTypeSCSI, 0, 0), at("u1", ControllerTypeSCSI, 0, 1), at("u2", ControllerTypeSCSI, 0, 2),
				at("u3", ControllerTypeSCSI, 0, 3), at("u4", ControllerTypeSCSI, 0, 4), at("u5", ControllerTypeSCSI, 0, 5),
				at("u6", ControllerTypeSCSI, 0, 6), at("next", ControllerTypeSCSI, 0, 8)},
			wantHW: &VirtualMachineHardwareSpec{SCSIControllers: []SCSIControllerSpec{{BusNumber: 0}}},
		},
		{
			name: "D18 MicrosoftWSFC needs a physically shared controller at the lowest unused bus",
			spec: VirtualMachineSpec{
				Hardware: &VirtualMachineHardwareSpec{SCSIControllers: []SCSIControllerSpec{{BusNumber: 0, SharingMode: none}}},
				Volumes:  []VirtualMachineVolume{wsfc},
			},
			want: []placed{at("wsfc", ControllerTypeSCSI, 1, 0)},
			wantHW: &VirtualMachineHardwareSpec{SCSIControllers: []SCSIControllerSpec{
				{BusNumber: 0, SharingMode: none}, {BusNumber: 1, SharingMode: ControllerSharingModePhysical, Type: pv}}},
		},
		{
			name:   "D18 a named bus that does not exist is created",
			spec:   VirtualMachineSpec{Volumes: []VirtualMachineVolume{typed("a", ControllerTypeNVME, devPtr(int32(2)))}},
			want:   []placed{at("a", ControllerTypeNVME, 2, 0)},
			wantHW: &VirtualMachineHardwareSpec{NVMEControllers: []NVMEControllerSpec{{BusNumber: 2, SharingMode: none}}},
		},
		{
			name: "D18 a named bus beyond the type's range is left alone",
			spec: VirtualMachineSpec{Volumes: []VirtualMachineVolume{typed("a", ControllerTypeSATA, devPtr(int32(4)))}},
			want: []placed{{Name: "a", Type: ControllerTypeSATA, Bus: devPtr(int32(4))}},
		},
		{
			name: "D18 fully placed volumes claim their units first",
			spec: VirtualMachineSpec{
				Hardware: &VirtualMachineHardwareSpec{SATAControllers: []SATAControllerSpec{{BusNumber: 0}}},
				Volumes:  []VirtualMachineVolume{typed("a", ControllerTypeSATA, nil), devPlaced(plain("b"), ControllerTypeSATA, 0, 0)},
			},
			want:   []placed{at("a", ControllerTypeSATA, 0, 1), at("b", ControllerTypeSATA, 0, 0)},
			wantHW: &VirtualMachineHardwareSpec{SATAControllers: []SATAControllerSpec{{BusNumber: 0}}},
		},
		{
			name: "D18 CD-ROM units are taken",
			spec: VirtualMachineSpec{
				Hardware: &VirtualMachineHardwareSpec{
					IDEControllers: []IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}},
					Cdrom:          []VirtualMachineCdromSpec{cdromAt("cd1", ControllerTypeIDE, 0, 0), cdromAt("cd2", ControllerTypeIDE, 0, 1)},
				},
				Volumes: []VirtualMachineVolume{typed("a", ControllerTypeIDE, nil)},
			},
			want: []placed{at("a", ControllerTypeIDE, 1, 0)},
		},
		{
			name: "D18 no bus left for the type",
			spec: VirtualMachineSpec{
				Hardware: &VirtualMachineHardwareSpec{IDEControllers: []IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}},
					Cdrom: []VirtualMachineCdromSpec{cdromAt("c1", ControllerTypeIDE, 0, 0), cdromAt("c2", ControllerTypeIDE, 0, 1),
						cdromAt("c3", ControllerTypeIDE, 1, 0), cdromAt("c4", ControllerTypeIDE, 1, 1)}},
				Volumes: []VirtualMachineVolume{typed("a", ControllerTypeIDE, nil)},
			},
			want: []placed{{Name: "a", Type: ControllerTypeIDE}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec
			PlaceVolumes(&s)
			if diff := cmp.Diff(tt.want, placements(s.Volumes)); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
			if tt.wantHW != nil {
				if diff := cmp.Diff(tt.wantHW, s.Hardware); diff != "" {
					t.Errorf("hardware (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestPlaceCdroms(t *testing.T) {
	ides := []IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}}
	unplaced := func(name string) VirtualMachineCdromSpec { return cdromAt(name, "", 0, 0) }
	where := func(cs []VirtualMachineCdromSpec) []placed {
		out := []placed{}
		for _, c := range cs {
			out = append(out, placed{c.Name, c.ControllerType, c.ControllerBusNumber, c.UnitNumber})
		}
		return out
	}
	tests := []struct {
		name     string
		hw       VirtualMachineHardwareSpec
		vols     []VirtualMachineVolume
		want     []placed
		hwPart   func(hw VirtualMachineHardwareSpec) any // the part of the hardware compared, if any
		wantPart any
	}{
		{
			name: "D19 unplaced CD-ROMs fill IDE, then SATA",
			hw: VirtualMachineHardwareSpec{IDEControllers: ides, Cdrom: []VirtualMachineCdromSpec{
				unplaced("a"), unplaced("b"), unplaced("c"), unplaced("d"), unplaced("e"), unplaced("f")}},
			want: []placed{at("a", ControllerTypeIDE, 0, 0), at("b", ControllerTypeIDE, 0, 1), at("c", ControllerTypeIDE, 1, 0),
				at("d", ControllerTypeIDE, 1, 1), at("e", ControllerTypeSATA, 0, 0), at("f", ControllerTypeSATA, 0, 1)},
			hwPart:   func(hw VirtualMachineHardwareSpec) any { return hw.SATAControllers },
			wantPart: []SATAControllerSpec{{BusNumber: 0}},
		},
		{
			name: "D19 full placements first, volumes' units taken",
			hw: VirtualMachineHardwareSpec{IDEControllers: ides, Cdrom: []VirtualMachineCdromSpec{
				unplaced("a"), cdromAt("b", ControllerTypeIDE, 0, 0)}},
			vols: []VirtualMachineVolume{devPlaced(VirtualMachineVolume{Name: "v"}, ControllerTypeIDE, 0, 1)},
			want: []placed{at("a", ControllerTypeIDE, 1, 0), at("b", ControllerTypeIDE, 0, 0)},
		},
		{
			name: "D19 type and bus given: lowest free unit, controller created",
			hw: VirtualMachineHardwareSpec{IDEControllers: ides, Cdrom: []VirtualMachineCdromSpec{
				{Name: "a", Image: ImageRef{Kind: imageKindNamespaced, Name: "vmi-a"}, ControllerType: ControllerTypeSATA, ControllerBusNumber: devPtr(int32(2))}}},
			vols:     []VirtualMachineVolume{devPlaced(VirtualMachineVolume{Name: "v"}, ControllerTypeSATA, 2, 0)},
			want:     []placed{at("a", ControllerTypeSATA, 2, 1)},
			hwPart:   func(hw VirtualMachineHardwareSpec) any { return hw.SATAControllers },
			wantPart: []SATAControllerSpec{{BusNumber: 2}},
		},
		{
			name: "D19 other partial placements are left alone",
			hw: VirtualMachineHardwareSpec{IDEControllers: ides, Cdrom: []VirtualMachineCdromSpec{
				{Name: "a", Image: ImageRef{Name: "vmi-a"}, ControllerType: ControllerTypeIDE, UnitNumber: devPtr(int32(1))}}},
			want: []placed{{Name: "a", Type: ControllerTypeIDE, Unit: devPtr(int32(1))}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hw := tt.hw
			s := VirtualMachineSpec{Hardware: &hw, Volumes: tt.vols}
			PlaceCdroms(&s)
			if diff := cmp.Diff(tt.want, where(s.Hardware.Cdrom)); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
			if tt.hwPart != nil {
				if diff := cmp.Diff(tt.wantPart, tt.hwPart(*s.Hardware)); diff != "" {
					t.Errorf("hardware (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestPlaceDevicesOnUpdate shows D18 and D19 through admission: they run on updates of
// upgraded VMs only.
func TestPlaceDevicesOnUpdate(t *testing.T) {
	upgraded := func(vm *VirtualMachine) {
		devUpgraded(vm)
		cdroms(true, cdromAt("cd1", ControllerTypeIDE, 0, 0))(vm)
	}
	notUpgraded := func(vm *VirtualMachine) { cdroms(true, cdromAt("cd1", ControllerTypeIDE, 0, 0))(vm) }
	add := func(vm *VirtualMachine) {
		vm.Spec.PowerState = PowerStateOff
		vm.Spec.Volumes = []VirtualMachineVolume{{Name: "data", PersistentVolumeClaim: &PersistentVolumeClaimVolumeSource{ClaimName: "claim-rwo"}}}
		vm.Spec.Hardware.Cdrom[0].Image.Kind = "" // as a manifest written before D5 would send it
		vm.Spec.Hardware.Cdrom = append(vm.Spec.Hardware.Cdrom, cdromAt("cd2", "", 0, 0))
	}
	runDevCases(t, []devCase{
		{name: "D18 D19 devices placed on an upgraded VM", old: upgraded, vm: add, code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if diff := cmp.Diff([]placed{at("data", ControllerTypeSCSI, 0, 0)}, placements(vm.Spec.Volumes)); diff != "" {
					t.Errorf("volumes (-want +got):\n%s", diff)
				}
				wantSCSI := []SCSIControllerSpec{{BusNumber: 0, SharingMode: ControllerSharingModeNone, Type: SCSIControllerTypeParaVirtual}}
				if diff := cmp.Diff(wantSCSI, vm.Spec.Hardware.SCSIControllers); diff != "" {
					t.Errorf("SCSI controllers (-want +got):\n%s", diff)
				}
				cd2 := vm.Spec.Hardware.Cdrom[1]
				got := placed{cd2.Name, cd2.ControllerType, cd2.ControllerBusNumber, cd2.UnitNumber}
				if diff := cmp.Diff(at("cd2", ControllerTypeIDE, 0, 1), got); diff != "" {
					t.Errorf("cd2 (-want +got):\n%s", diff)
				}
				if k := vm.Spec.Hardware.Cdrom[0].Image.Kind; k != imageKindNamespaced {
					t.Errorf("cd1 image kind = %q, want %q from the stored CD-ROM of the same image", k, imageKindNamespaced)
				}
			}},
		{name: "D18 D19 nothing placed before the upgrade", old: notUpgraded, vm: add, code: 200,
			check: func(t *testing.T, vm *VirtualMachine) {
				if diff := cmp.Diff([]placed{{Name: "data"}}, placements(vm.Spec.Volumes)); diff != "" {
					t.Errorf("volumes (-want +got):\n%s", diff)
				}
				if c := vm.Spec.Hardware.Cdrom[1]; c.ControllerType != "" || c.UnitNumber != nil {
					t.Errorf("cd2 placed before the upgrade: %s", devJSON(c))
				}
			}},
		{name: "D19 image kind stays empty when the stored CD-ROM's kind was another", code: 422,
			old: func(vm *VirtualMachine) {
				notUpgraded(vm)
				vm.Spec.Hardware.Cdrom[0].Image.Kind = imageKindCluster
			},
			vm: func(vm *VirtualMachine) {
				vm.Spec.PowerState = PowerStateOff
				vm.Spec.Hardware.Cdrom[0].Image.Kind = ""
			},
			errs: []devErr{{field.ErrorTypeNotSupported, "spec.hardware.cdrom[0].image.kind"}}},
	})
}
