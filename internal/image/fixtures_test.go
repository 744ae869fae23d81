package image

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/image/debkernel/debtest"
)

// elfSection is one section of a hand-made ELF file.
type elfSection struct {
	name string
	typ  elf.SectionType
	data []byte
}

// makeELF writes a minimal little-endian ELF64 file: a header, the sections
// (plus the null section and .shstrtab) and, when interp is set, one
// PT_INTERP program header.
func makeELF(typ elf.Type, machine elf.Machine, sections []elfSection, interp string) []byte {
	const ehsize, shentsize, phentsize = 64, 64, 56
	var body bytes.Buffer
	body.Write(make([]byte, ehsize))
	phoff, phnum := 0, 0
	var interpOff int
	if interp != "" {
		phoff, phnum = body.Len(), 1
		body.Write(make([]byte, phentsize))
		interpOff = body.Len()
		body.WriteString(interp + "\x00")
	}
	shstr := []byte{0}
	nameOff := make([]int, len(sections))
	for i, s := range sections {
		nameOff[i] = len(shstr)
		shstr = append(append(shstr, s.name...), 0)
	}
	shstrName := len(shstr)
	shstr = append(append(shstr, ".shstrtab"...), 0)
	offs := make([]int, len(sections))
	for i, s := range sections {
		offs[i] = body.Len()
		body.Write(s.data)
	}
	shstrOff := body.Len()
	body.Write(shstr)
	for body.Len()%8 != 0 {
		body.WriteByte(0)
	}
	shoff := body.Len()
	le := binary.LittleEndian
	sh := func(name uint32, t elf.SectionType, flags uint64, off, size int) {
		var b [shentsize]byte
		le.PutUint32(b[0:], name)
		le.PutUint32(b[4:], uint32(t))
		le.PutUint64(b[8:], flags)
		le.PutUint64(b[24:], uint64(off))
		le.PutUint64(b[32:], uint64(size))
		le.PutUint64(b[48:], 1)
		body.Write(b[:])
	}
	sh(0, elf.SHT_NULL, 0, 0, 0)
	for i, s := range sections {
		sh(uint32(nameOff[i]), s.typ, uint64(elf.SHF_ALLOC), offs[i], len(s.data))
	}
	sh(uint32(shstrName), elf.SHT_STRTAB, 0, shstrOff, len(shstr))
	b := body.Bytes()
	copy(b, []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)})
	le.PutUint16(b[16:], uint16(typ))
	le.PutUint16(b[18:], uint16(machine))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[32:], uint64(phoff))
	le.PutUint64(b[40:], uint64(shoff))
	le.PutUint16(b[52:], ehsize)
	le.PutUint16(b[54:], phentsize)
	le.PutUint16(b[56:], uint16(phnum))
	le.PutUint16(b[58:], shentsize)
	le.PutUint16(b[60:], uint16(len(sections)+2))
	le.PutUint16(b[62:], uint16(len(sections)+1))
	if interp != "" {
		p := b[phoff:]
		le.PutUint32(p[0:], uint32(elf.PT_INTERP))
		le.PutUint32(p[4:], uint32(elf.PF_R))
		le.PutUint64(p[8:], uint64(interpOff))
		le.PutUint64(p[32:], uint64(len(interp)+1))
		le.PutUint64(p[40:], uint64(len(interp)+1))
		le.PutUint64(p[48:], 1)
	}
	return b
}

// makeModule is a kernel module: an ELF relocatable with a .modinfo section.
func makeModule(machine elf.Machine, name, version string, depends ...string) []byte {
	info := "license=GPL\x00depends=" + strings.Join(depends, ",") + "\x00retpoline=Y\x00name=" + name + "\x00vermagic=" + version + " SMP preempt mod_unload modversions \x00"
	return makeELF(elf.ET_REL, machine, []elfSection{
		{".text", elf.SHT_PROGBITS, []byte{0xc3}},
		{".modinfo", elf.SHT_PROGBITS, []byte(info)},
	}, "")
}

// makeAgent is an executable; interp makes it dynamically linked.
func makeAgent(machine elf.Machine, interp string) []byte {
	return makeELF(elf.ET_EXEC, machine, []elfSection{{".text", elf.SHT_PROGBITS, bytes.Repeat([]byte{0x90}, 100)}}, interp)
}

// makeBzImage is enough of an x86 bzImage for the checks: the boot sector
// signature, the "HdrS" header and a version string.
func makeBzImage(version string) []byte {
	b := make([]byte, 0x2000)
	b[0x1fe], b[0x1ff] = 0x55, 0xaa
	copy(b[0x202:], "HdrS")
	binary.LittleEndian.PutUint16(b[0x206:], 0x020f)
	const verAt = 0x400
	binary.LittleEndian.PutUint16(b[0x20e:], verAt-0x200)
	copy(b[verAt:], version+" (builder@example) #1 SMP PREEMPT_DYNAMIC Debian 6.1.0-1\x00")
	for i := 0x1000; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	return b
}

// makeBzImageWithPayload is makeBzImage with a payload: three setup
// sectors, then the protected-mode part, in which the setup header places
// payload (the compressed kernel, with the build's size trailer) at 0x100.
func makeBzImageWithPayload(version string, payload []byte) []byte {
	const setupSects, payloadOffset = 3, 0x100
	b := makeBzImage(version)
	b[setupSectsAt] = setupSects
	pm := (setupSects + 1) * 512
	b = append(b[:pm+payloadOffset], payload...)
	b = append(b, bytes.Repeat([]byte{0xcc}, 64)...) // what follows the payload in a real bzImage
	binary.LittleEndian.PutUint32(b[payloadOffsetAt:], payloadOffset)
	binary.LittleEndian.PutUint32(b[payloadLengthAt:], uint32(len(payload)))
	return b
}

// elfNote is a note in makeKernelELF's PT_NOTE segment.
type elfNote struct {
	name string
	typ  uint32
	desc []byte
}

// pvhNote is the PVH entry note Linux has (a 64-bit kernel's descriptor
// is 8 bytes).
func pvhNote(entry uint64) elfNote {
	return elfNote{"Xen", xenELFNotePhys32Entry, binary.LittleEndian.AppendUint64(nil, entry)}
}

// makeKernelELF is enough of an x86-64 vmlinux: an executable with a
// PT_LOAD segment holding the version banner and a PT_NOTE segment
// holding notes, 4-byte aligned as Linux's are.
func makeKernelELF(version string, notes ...elfNote) []byte {
	const ehsize, phentsize = 64, 56
	le := binary.LittleEndian
	pad4 := func(b []byte) []byte {
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	var nb []byte
	for _, n := range notes {
		nb = le.AppendUint32(nb, uint32(len(n.name)+1))
		nb = le.AppendUint32(nb, uint32(len(n.desc)))
		nb = le.AppendUint32(nb, n.typ)
		nb = pad4(append(append(nb, n.name...), 0))
		nb = pad4(append(nb, n.desc...))
	}
	text := append(bytes.Repeat([]byte{0x90}, 64), "Linux version "+version+" (builder@example) #1 SMP\x00"...)
	textOff := ehsize + 2*phentsize
	noteOff := textOff + len(text)
	b := make([]byte, noteOff, noteOff+len(nb))
	b = append(b, nb...)
	copy(b, []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)})
	le.PutUint16(b[16:], uint16(elf.ET_EXEC))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[24:], 0x1000000)
	le.PutUint64(b[32:], ehsize)
	le.PutUint16(b[52:], ehsize)
	le.PutUint16(b[54:], phentsize)
	le.PutUint16(b[56:], 2)
	le.PutUint16(b[58:], 64)
	ph := func(i int, typ elf.ProgType, flags elf.ProgFlag, off, size int, paddr, align uint64) {
		p := b[ehsize+i*phentsize:]
		le.PutUint32(p[0:], uint32(typ))
		le.PutUint32(p[4:], uint32(flags))
		le.PutUint64(p[8:], uint64(off))
		le.PutUint64(p[16:], 0xffffffff80000000+paddr)
		le.PutUint64(p[24:], paddr)
		le.PutUint64(p[32:], uint64(size))
		le.PutUint64(p[40:], uint64(size))
		le.PutUint64(p[48:], align)
	}
	ph(0, elf.PT_LOAD, elf.PF_R|elf.PF_X, textOff, len(text), 0x1000000, 0x200000)
	ph(1, elf.PT_NOTE, elf.PF_R, noteOff, len(nb), 0x1000000+uint64(len(text)), 4)
	return b
}

// withSize appends the uncompressed size of raw, as the kernel's build
// does to every compressed payload but gzip's.
func withSize(compressed, raw []byte) []byte {
	return binary.LittleEndian.AppendUint32(bytes.Clone(compressed), uint32(len(raw)))
}

// makeArm64Image is enough of an arm64 Image: the magic at 0x38 and a banner.
func makeArm64Image(version string) []byte {
	b := make([]byte, 0x3000)
	copy(b[0x38:], "ARM\x64")
	copy(b[0x1800:], "Linux version %s (look-alike)\x00")
	copy(b[0x2000:], "Linux version "+version+" (debian-kernel@lists.debian.org) #1 SMP\x00")
	return b
}

// fakeKernelTree is a kernel and a modules directory:
//
//	a, b depends on a, c depends on a and b, d-dash (file d-dash.ko) depends
//	on b, e is built in, g depends on e (built in); compressed as Debian 13
//	and other distributions ship them: f.ko.xz depends on a, zs.ko.zst on
//	f, gzm.ko.gz on zs.
type fakeKernelTree struct {
	root, kernel, modules, version string
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func newFakeKernel(t testing.TB, machine elf.Machine) fakeKernelTree {
	t.Helper()
	root := t.TempDir()
	ver := "6.1.0-test-amd64"
	// Like Debian's: an xz'd kernel, with a PVH entry.
	kimg := makeBzImageWithPayload(ver, withSize(xzStream(t, makeKernelELF(ver, pvhNote(0x1000abc)), true, 1), makeKernelELF(ver, pvhNote(0x1000abc))))
	if machine == elf.EM_AARCH64 {
		ver = "6.1.0-test-arm64"
		kimg = makeArm64Image(ver)
	}
	ft := fakeKernelTree{root: root, version: ver,
		kernel:  filepath.Join(root, "boot", "vmlinuz-"+ver),
		modules: filepath.Join(root, "lib", "modules", ver)}
	writeFile(t, ft.kernel, kimg)
	m := ft.modules
	writeFile(t, filepath.Join(m, "kernel/drivers/a/a.ko"), makeModule(machine, "a", ver))
	writeFile(t, filepath.Join(m, "kernel/drivers/b/b.ko"), makeModule(machine, "b", ver, "a"))
	writeFile(t, filepath.Join(m, "kernel/drivers/c/c.ko"), makeModule(machine, "c", ver, "a", "b"))
	writeFile(t, filepath.Join(m, "kernel/net/d-dash.ko"), makeModule(machine, "d_dash", ver, "b"))
	writeFile(t, filepath.Join(m, "kernel/drivers/f/f.ko.xz"), xzStream(t, makeModule(machine, "f", ver, "a"), false, 1))
	writeFile(t, filepath.Join(m, "kernel/drivers/zs/zs.ko.zst"), debtest.Zstd(t, makeModule(machine, "zs", ver, "f")))
	writeFile(t, filepath.Join(m, "kernel/drivers/gzm/gzm.ko.gz"), debtest.Gzip(t, makeModule(machine, "gzm", ver, "zs")))
	writeFile(t, filepath.Join(m, "kernel/drivers/g/g.ko"), makeModule(machine, "g", ver, "e"))
	writeFile(t, filepath.Join(m, "modules.builtin"), []byte("kernel/drivers/e/e.ko\nkernel/drivers/tty/serial/8250/8250.ko\n"))
	return ft
}
