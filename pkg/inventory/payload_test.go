package inventory

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/vmware/govmomi/ovf"
	"github.com/vmware/govmomi/vmdk"
)

func TestStreamOptimizedVMDK(t *testing.T) {
	for _, capacity := range []int64{10 << 30, 20 << 30, 50 << 30} {
		b := streamOptimizedVMDK("disk.vmdk", capacity, 19)
		info, err := vmdk.Seek(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%d GiB: %v", capacity>>30, err)
		}
		if info.Capacity != capacity || info.Descriptor.Type != "streamOptimized" || len(info.Descriptor.Extent) != 1 {
			t.Errorf("%d GiB: capacity %d, type %s, extents %v", capacity>>30, info.Capacity, info.Descriptor.Type, info.Descriptor.Extent)
		}
		if len(b)%sector != 0 || len(b) > 16<<10 {
			t.Errorf("%d GiB: %d bytes, want whole sectors and tiny", capacity>>30, len(b))
		}
		if eos := b[len(b)-sector:]; !bytes.Equal(eos, make([]byte, sector)) {
			t.Errorf("%d GiB: last sector is not the end-of-stream marker", capacity>>30)
		}
	}
}

func TestISO9660(t *testing.T) {
	b := iso9660("TEST_VOLUME")
	const block = 2048
	pvd := b[16*block:]
	if pvd[0] != 1 || string(pvd[1:6]) != "CD001" {
		t.Fatalf("no primary volume descriptor: % x", pvd[:8])
	}
	if got := strings.TrimRight(string(pvd[40:72]), " "); got != "TEST_VOLUME" {
		t.Errorf("volume id = %q", got)
	}
	if size := binary.LittleEndian.Uint32(pvd[80:]); int(size)*block != len(b) {
		t.Errorf("volume space %d blocks, image %d bytes", size, len(b))
	}
	if term := b[17*block:]; term[0] != 255 || string(term[1:6]) != "CD001" {
		t.Errorf("no descriptor set terminator")
	}
	rootLBA := binary.LittleEndian.Uint32(pvd[156+2:])
	if !bytes.Contains(b[rootLBA*block:(rootLBA+1)*block], []byte("README.TXT;1")) {
		t.Errorf("root directory lacks README.TXT")
	}
}

// TestDescriptorsDeclareTheirDisks: every OVF of the catalog parses and its DiskSection and
// References agree with the spec and the generated files.
func TestDescriptorsDeclareTheirDisks(t *testing.T) {
	for _, img := range images {
		if img.ovf == nil {
			continue
		}
		t.Run(img.item, func(t *testing.T) {
			files, err := img.files()
			if err != nil {
				t.Fatal(err)
			}
			env, err := ovf.Unmarshal(bytes.NewReader(files[0].Data))
			if err != nil {
				t.Fatalf("%s: %v", files[0].Name, err)
			}
			if len(env.Disk.Disks) != len(img.ovf.Disks) || len(env.References) != len(files)-1 {
				t.Fatalf("%d disks, %d references; want %d and %d", len(env.Disk.Disks), len(env.References), len(img.ovf.Disks), len(files)-1)
			}
			for i, d := range env.Disk.Disks {
				ref := env.References[i]
				if *d.FileRef != ref.ID || ref.Href != files[i+1].Name || int(ref.Size) != len(files[i+1].Data) {
					t.Errorf("disk %s: file %s %s %d, generated %s %d", d.DiskID, *d.FileRef, ref.Href, ref.Size, files[i+1].Name, len(files[i+1].Data))
				}
				capacity := int64(img.ovf.Disks[i].CapacityGiB) << 30
				if got := must(t, d.Capacity) * ovf.ParseCapacityAllocationUnits(*d.CapacityAllocationUnits); got != capacity {
					t.Errorf("disk %s: capacity %d, want %d", d.DiskID, got, capacity)
				}
			}
		})
	}
}

func must(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
