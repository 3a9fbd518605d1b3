package inventory

import (
	"encoding/binary"
	"fmt"
)

// The payloads are tiny but well-formed, so that a tool that opens them (qemu-img, a loop mount)
// sees an empty disk of the declared capacity and a readable CD. They are deterministic: the same
// catalog always uploads the same bytes.

const sector = 512

// streamOptimizedVMDK returns an empty stream-optimized sparse VMDK (the OVF disk format) of the
// given capacity: header, embedded descriptor, an all-zero grain directory (no grain is
// allocated), footer and end-of-stream marker. govmomi's vmdk.StreamOptimizedWriter would do, but
// it writes every grain table through a file: 6.5 MB and a second for an empty 50 GiB disk, where
// this is 10 KB.
func streamOptimizedVMDK(name string, capacity int64, hwVersion int) []byte {
	const (
		grainSectors  = 128 // 64 KiB grains
		gtesPerGT     = 512
		markerEOS     = 0
		markerGD      = 2
		markerFooter  = 3
		gdAtEnd       = ^uint64(0)
		flagNewline   = 1 << 0
		flagCompress  = 1 << 16
		flagMarkers   = 1 << 17
		deflateMethod = 1
	)
	sectors := uint64(capacity / sector)
	cylinders := min(sectors/(255*63), 65535)
	descriptor := fmt.Sprintf("# Disk DescriptorFile\nversion=1\nencoding=\"UTF-8\"\nCID=fffffffe\nparentCID=ffffffff\n"+
		"createType=\"streamOptimized\"\n\n# Extent description\nRW %d SPARSE %q\n\n# The Disk Data Base\n#DDB\n\n"+
		"ddb.adapterType = \"lsilogic\"\nddb.geometry.cylinders = \"%d\"\nddb.geometry.heads = \"255\"\n"+
		"ddb.geometry.sectors = \"63\"\nddb.virtualHWVersion = \"%d\"\n", sectors, name, cylinders, hwVersion)
	descSectors := uint64(len(descriptor)+sector-1) / sector
	gdEntries := (sectors + grainSectors*gtesPerGT - 1) / (grainSectors * gtesPerGT)
	gdSectors := (gdEntries*4 + sector - 1) / sector

	header := func(gdOffset uint64) []byte {
		h := make([]byte, sector)
		le := binary.LittleEndian
		copy(h[0:], "KDMV")
		le.PutUint32(h[4:], 3) // version
		le.PutUint32(h[8:], flagNewline|flagCompress|flagMarkers)
		le.PutUint64(h[12:], sectors)
		le.PutUint64(h[20:], grainSectors)
		le.PutUint64(h[28:], 1) // descriptor offset
		le.PutUint64(h[36:], descSectors)
		le.PutUint32(h[44:], gtesPerGT)
		le.PutUint64(h[48:], 0) // no redundant grain directory
		le.PutUint64(h[56:], gdOffset)
		le.PutUint64(h[64:], 1+descSectors) // overhead
		h[72] = 0                           // clean shutdown
		copy(h[73:], "\n \r\n")             // newline detection characters
		le.PutUint16(h[77:], deflateMethod)
		return h
	}
	marker := func(value uint64, kind uint32) []byte {
		m := make([]byte, sector)
		binary.LittleEndian.PutUint64(m[0:], value)
		binary.LittleEndian.PutUint32(m[12:], kind)
		return m
	}

	out := header(gdAtEnd)
	desc := make([]byte, descSectors*sector)
	copy(desc, descriptor)
	out = append(out, desc...)
	gdOffset := uint64(len(out))/sector + 1 // after the GD marker
	out = append(out, marker(gdSectors, markerGD)...)
	out = append(out, make([]byte, gdSectors*sector)...)
	out = append(out, marker(1, markerFooter)...)
	out = append(out, header(gdOffset)...)
	return append(out, marker(0, markerEOS)...)
}

// iso9660 returns a minimal ISO 9660 image labelled volumeID whose root directory holds one
// README.TXT.
func iso9660(volumeID string) []byte {
	const (
		block                          = 2048
		pvdLBA                         = 16
		pathL, pathM, rootLBA, fileLBA = 18, 19, 20, 21
		totalBlocks                    = 22
	)
	readme := []byte("vmop seed ISO " + volumeID + "\n")
	img := make([]byte, totalBlocks*block)
	both32 := func(b []byte, v uint32) {
		binary.LittleEndian.PutUint32(b[0:], v)
		binary.BigEndian.PutUint32(b[4:], v)
	}
	both16 := func(b []byte, v uint16) {
		binary.LittleEndian.PutUint16(b[0:], v)
		binary.BigEndian.PutUint16(b[2:], v)
	}
	padded := func(b []byte, s string) {
		for i := range b {
			b[i] = ' '
		}
		copy(b, s)
	}
	// recorded is 2024-01-01 00:00:00 UTC in the 7-byte directory-record form.
	recorded := []byte{124, 1, 1, 0, 0, 0, 0}
	dirRecord := func(b []byte, lba, size uint32, dir bool, name []byte) int {
		n := 33 + len(name)
		n += n % 2
		b[0] = byte(n)
		both32(b[2:], lba)
		both32(b[10:], size)
		copy(b[18:], recorded)
		if dir {
			b[25] = 2
		}
		both16(b[28:], 1) // volume sequence number
		b[32] = byte(len(name))
		copy(b[33:], name)
		return n
	}

	pvd := img[pvdLBA*block:]
	pvd[0] = 1
	copy(pvd[1:], "CD001")
	pvd[6] = 1
	padded(pvd[8:40], "LINUX")
	padded(pvd[40:72], volumeID)
	both32(pvd[80:], totalBlocks)
	both16(pvd[120:], 1)     // volume set size
	both16(pvd[124:], 1)     // volume sequence number
	both16(pvd[128:], block) // logical block size
	both32(pvd[132:], 10)    // path table size: the root entry only
	binary.LittleEndian.PutUint32(pvd[140:], pathL)
	binary.BigEndian.PutUint32(pvd[148:], pathM)
	dirRecord(pvd[156:190], rootLBA, block, true, []byte{0})
	for _, f := range [][2]int{{190, 128}, {318, 128}, {446, 128}, {574, 128}, {702, 37}, {739, 37}, {776, 37}} {
		padded(pvd[f[0]:f[0]+f[1]], "")
	}
	padded(pvd[574:702], "VMOP INVENTORY")
	for _, off := range []int{813, 830, 847, 864} { // creation, modification, expiration, effective
		copy(pvd[off:], "0000000000000000")
	}
	copy(pvd[813:], "2024010100000000")
	copy(pvd[830:], "2024010100000000")
	pvd[881] = 1 // file structure version

	term := img[(pvdLBA+1)*block:]
	term[0] = 255
	copy(term[1:], "CD001")
	term[6] = 1

	for _, pt := range []struct {
		lba   int
		order binary.ByteOrder
	}{{pathL, binary.LittleEndian}, {pathM, binary.BigEndian}} {
		e := img[pt.lba*block:]
		e[0] = 1 // name length
		pt.order.PutUint32(e[2:], rootLBA)
		pt.order.PutUint16(e[6:], 1) // parent: the root itself
	}

	root := img[rootLBA*block : (rootLBA+1)*block]
	off := dirRecord(root, rootLBA, block, true, []byte{0})
	off += dirRecord(root[off:], rootLBA, block, true, []byte{1})
	dirRecord(root[off:], fileLBA, uint32(len(readme)), false, []byte("README.TXT;1"))
	copy(img[fileLBA*block:], readme)
	return img
}
