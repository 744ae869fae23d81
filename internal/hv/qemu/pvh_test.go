package qemu

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubPVHKernel is an ELF kernel as image builds boot on amd64 (the
// vmlinux unpacked from a bzImage): one PT_LOAD segment holding code at
// 1 MiB and, when pvh is set, the PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY,
// 18, named "Xen") pointing at it. PVH starts the code in 32-bit protected
// mode without paging, as multiboot does, so the multiboot stubs' code runs
// as it is.
func stubPVHKernel(code []byte, pvh bool) []byte {
	const (
		ehsize, phentsize = 64, 56
		loadAddr          = 0x100000
		xenPhys32Entry    = 18
	)
	le := binary.LittleEndian
	var note []byte
	if pvh {
		note = le.AppendUint32(note, 4) // "Xen\0"
		note = le.AppendUint32(note, 8) // a 64-bit kernel's descriptor
		note = le.AppendUint32(note, xenPhys32Entry)
		note = append(note, "Xen\x00"...)
		note = le.AppendUint64(note, loadAddr)
	}
	codeOff := ehsize + 2*phentsize
	noteOff := codeOff + len(code)
	b := make([]byte, noteOff, noteOff+len(note))
	b = append(b, note...)
	copy(b, []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)})
	copy(b[codeOff:], code)
	le.PutUint16(b[16:], uint16(elf.ET_EXEC))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[24:], loadAddr)
	le.PutUint64(b[32:], ehsize)
	le.PutUint16(b[52:], ehsize)
	le.PutUint16(b[54:], phentsize)
	le.PutUint16(b[56:], 2)
	le.PutUint16(b[58:], 64)
	ph := func(i int, typ elf.ProgType, off, size int, addr, align uint64) {
		p := b[ehsize+i*phentsize:]
		le.PutUint32(p[0:], uint32(typ))
		le.PutUint32(p[4:], uint32(elf.PF_R|elf.PF_X))
		le.PutUint64(p[8:], uint64(off))
		le.PutUint64(p[16:], addr)
		le.PutUint64(p[24:], addr)
		le.PutUint64(p[32:], uint64(size))
		le.PutUint64(p[40:], uint64(size))
		le.PutUint64(p[48:], align)
	}
	ph(0, elf.PT_LOAD, codeOff, len(code), loadAddr, 0x1000)
	ph(1, elf.PT_NOTE, noteOff, len(note), loadAddr+uint64(len(code)), 4)
	return b
}

// An ELF kernel with a PVH entry boots on q35 under TCG, as the image's
// vmlinux does: QEMU's -kernel takes it and starts it at its PVH entry.
func TestBootPVHKernel(t *testing.T) {
	requireQEMU(t)
	img := stubImage(t)
	img.Kernel = filepath.Join(img.Dir, "vmlinux")
	require.NoError(t, os.WriteFile(img.Kernel, stubPVHKernel(bytes.Join([][]byte{printMarker, haltForever}, nil), true), 0o644))
	spec := stubSpec(t, img)
	m := startVM(t, New(Options{CacheDir: t.TempDir()}), spec)
	assert.Equal(t, AccelTCG, m.Info().Accel)
	state, err := ReadState(spec.StateDir)
	require.NoError(t, err)
	assert.Equal(t, machineQ35, state.Machine)
	assert.Contains(t, state.Args, img.Kernel, "-kernel is the ELF")
	console, err := os.ReadFile(m.Info().ConsoleLog)
	require.NoError(t, err)
	assert.Equal(t, stubMarker, string(console), "the PVH entry ran, and nothing else wrote to the console")
}

// Without the note QEMU refuses the ELF at once; its words reach the error.
func TestBootELFWithoutPVH(t *testing.T) {
	requireQEMU(t)
	img := stubImage(t)
	img.Kernel = filepath.Join(img.Dir, "vmlinux")
	require.NoError(t, os.WriteFile(img.Kernel, stubPVHKernel(bytes.Join([][]byte{printMarker, haltForever}, nil), false), 0o644))
	_, err := New(Options{CacheDir: t.TempDir()}).Start(context.Background(), stubSpec(t, img))
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "PVH")
}
