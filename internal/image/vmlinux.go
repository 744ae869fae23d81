package image

import (
	"bytes"
	"compress/bzip2"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz/lzma"
)

// An x86 bzImage is a real-mode setup, a decompressor and the compressed
// kernel: its payload. Under TCG the guest runs that decompressor one
// emulated instruction at a time, which for Debian's xz'd kernel takes
// seconds. QEMU also boots the uncompressed ELF kernel (vmlinux), through
// the PVH entry point the kernel names in an ELF note, so the image builder
// unpacks the payload once, on the host.

// The bzImage setup header's fields used here (the kernel's
// Documentation/arch/x86/boot.rst); payload_offset and payload_length exist
// from boot protocol 2.08 on.
const (
	setupSectsAt       = 0x1f1
	bootProtocolAt     = 0x206
	payloadOffsetAt    = 0x248
	payloadLengthAt    = 0x24c
	minPayloadProtocol = 0x0208
)

// xenELFNotePhys32Entry is XEN_ELFNOTE_PHYS32_ENTRY: in a note named "Xen",
// the kernel's 32-bit PVH entry point. QEMU's x86 loader boots an ELF
// kernel only through it ("Error loading uncompressed kernel without PVH ELF
// Note" otherwise); Linux has it when built with CONFIG_PVH.
const xenELFNotePhys32Entry = 18

// Payload compressions, named as the kernel's build names them
// (CONFIG_KERNEL_GZIP, ...).
const (
	compressionGzip  = "gzip"
	compressionXZ    = "xz"
	compressionZstd  = "zstd"
	compressionLZ4   = "lz4"
	compressionLZMA  = "lzma"
	compressionBzip2 = "bzip2"
	compressionLZO   = "lzo"
)

// payloadMagics tell a payload's compression by its first bytes, as the
// kernel's decompressor selection (lib/decompress.c) does.
var payloadMagics = []struct {
	compression string
	magic       []byte
}{
	{compressionGzip, []byte{0x1f, 0x8b}},
	{compressionXZ, xzMagic},
	{compressionZstd, []byte{0x28, 0xb5, 0x2f, 0xfd}},
	{compressionLZ4, []byte{0x02, 0x21, 0x4c, 0x18}}, // the legacy frame, lz4 -l
	{compressionLZMA, []byte{0x5d, 0x00, 0x00}},
	{compressionBzip2, []byte("BZh")},
	{compressionLZO, []byte{0x89, 'L', 'Z', 'O'}},
}

// bzPayload is the compressed kernel in a bzImage.
type bzPayload struct {
	Compression string
	// Data is the payload as the bzImage holds it. The kernel's build
	// appends the uncompressed size to every compressed stream (for gzip
	// it is the stream's own last field), so the last 4 bytes are Size.
	Data []byte
	Size uint32
}

// bzImagePayload finds the compressed kernel in bzImage from its setup
// header.
func bzImagePayload(bz []byte) (bzPayload, error) {
	if !isBzImage(bz) {
		return bzPayload{}, fmt.Errorf("not an x86 bzImage (%s)", describe(bz))
	}
	if proto := binary.LittleEndian.Uint16(bz[bootProtocolAt:]); proto < minPayloadProtocol {
		return bzPayload{}, fmt.Errorf("boot protocol %d.%02d: the payload's place is in the header from 2.08 on", proto>>8, proto&0xff)
	}
	if len(bz) < payloadLengthAt+4 {
		return bzPayload{}, errors.New("the setup header is cut short")
	}
	setupSects := int64(bz[setupSectsAt])
	if setupSects == 0 {
		setupSects = 4 // what the boot protocol says 0 means
	}
	// The offset counts from the protected-mode code, after the boot
	// sector and the setup sectors.
	off := (setupSects+1)*512 + int64(binary.LittleEndian.Uint32(bz[payloadOffsetAt:]))
	n := int64(binary.LittleEndian.Uint32(bz[payloadLengthAt:]))
	switch {
	case n == 0:
		return bzPayload{}, errors.New("the setup header gives no payload (payload_length 0)")
	case n < 8:
		return bzPayload{}, fmt.Errorf("the setup header gives a %d-byte payload: too short for a kernel", n)
	case off+n > int64(len(bz)):
		return bzPayload{}, fmt.Errorf("the setup header puts the payload at %d..%d, past the end of the %d-byte file", off, off+n, len(bz))
	}
	p := bzPayload{Data: bz[off : off+n], Size: binary.LittleEndian.Uint32(bz[off+n-4:])}
	for _, m := range payloadMagics {
		if bytes.HasPrefix(p.Data, m.magic) {
			p.Compression = m.compression
			return p, nil
		}
	}
	return p, fmt.Errorf("the payload starts with % x, which is no compression the kernel's build uses", p.Data[:min(len(p.Data), 6)])
}

// decompress returns the uncompressed kernel, checking its size against
// the one the payload ends with.
func (p bzPayload) decompress(ctx context.Context) ([]byte, error) {
	// Every stream but gzip's is followed by the size the build appended.
	stream := p.Data[:len(p.Data)-4]
	// The size, when it is believable (kernels compress 3 to 10 times),
	// saves growing the output.
	sizeHint := min(int64(p.Size), 32*int64(len(p.Data)), maxKernelBytes)
	var out []byte
	var err error
	read := func(r io.Reader) {
		out, err = appendAll(ctx, make([]byte, 0, sizeHint), r, maxKernelBytes)
	}
	switch p.Compression {
	case compressionXZ:
		out, err = unxz(ctx, stream, int(sizeHint), maxKernelBytes)
	case compressionGzip:
		zr, gerr := gzip.NewReader(bytes.NewReader(p.Data))
		if gerr != nil {
			return nil, fmt.Errorf("gzip: %w", gerr)
		}
		zr.Multistream(false)
		read(zr)
	case compressionZstd:
		zr, zerr := zstd.NewReader(bytes.NewReader(stream), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxKernelBytes))
		if zerr != nil {
			return nil, fmt.Errorf("zstd: %w", zerr)
		}
		defer zr.Close()
		read(zr)
	case compressionLZ4:
		read(lz4.NewReader(bytes.NewReader(stream)))
	case compressionLZMA:
		zr, lerr := lzma.ReaderConfig{DictCap: maxKernelBytes}.NewReader(bytes.NewReader(stream))
		if lerr != nil {
			return nil, fmt.Errorf("lzma: %w", lerr)
		}
		read(zr)
	case compressionBzip2:
		read(bzip2.NewReader(bytes.NewReader(stream)))
	default:
		return nil, fmt.Errorf("the payload is %s-compressed, which qoslab cannot decompress (it reads %s, %s, %s, %s, %s and %s)",
			p.Compression, compressionXZ, compressionGzip, compressionZstd, compressionLZ4, compressionLZMA, compressionBzip2)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w", p.Compression, err)
	}
	if uint32(len(out)) != p.Size {
		return nil, fmt.Errorf("%s: the payload decompresses to %d bytes, but ends saying %d", p.Compression, len(out), p.Size)
	}
	return out, nil
}

// pvhEntry returns the PVH entry point of an ELF kernel: the descriptor of
// its XEN_ELFNOTE_PHYS32_ENTRY note named "Xen", found as QEMU finds it, in
// a PT_NOTE segment. ok is false when there is no such note.
func pvhEntry(f *elf.File) (entry uint64, ok bool, err error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p.Open(), 1<<20))
		if err != nil {
			return 0, false, fmt.Errorf("PT_NOTE segment at %#x: %w", p.Off, err)
		}
		// Names and descriptors are padded to the segment's alignment: 4
		// in Linux, 8 in some toolchains' 64-bit notes.
		align := uint64(4)
		if p.Align == 8 {
			align = 8
		}
		pad := func(n uint64) uint64 { return (n + align - 1) &^ (align - 1) }
		for off := uint64(0); off+12 <= uint64(len(b)); {
			namesz := uint64(f.ByteOrder.Uint32(b[off:]))
			descsz := uint64(f.ByteOrder.Uint32(b[off+4:]))
			typ := f.ByteOrder.Uint32(b[off+8:])
			nameAt := off + 12
			descAt := nameAt + pad(namesz)
			next := descAt + pad(descsz)
			// The last note's padding may be cut off.
			if nameAt+namesz > uint64(len(b)) || descAt+descsz > uint64(len(b)) {
				return 0, false, fmt.Errorf("PT_NOTE segment at %#x: the note at %d runs past its end", p.Off, off)
			}
			name := b[nameAt : nameAt+namesz]
			if typ == xenELFNotePhys32Entry && string(bytes.TrimRight(name, "\x00")) == "Xen" {
				desc := b[descAt : descAt+descsz]
				switch len(desc) {
				case 4:
					return uint64(f.ByteOrder.Uint32(desc)), true, nil
				case 8:
					return f.ByteOrder.Uint64(desc), true, nil
				}
				return 0, false, fmt.Errorf("the PVH entry note has a %d-byte descriptor; want 4 or 8", len(desc))
			}
			off = next
		}
	}
	return 0, false, nil
}

// errNoPVH is an uncompressed kernel QEMU cannot boot: it has no PVH entry.
var errNoPVH = errors.New("no PVH entry note (ELF note \"Xen\" type 18, XEN_ELFNOTE_PHYS32_ENTRY; the kernel was built without CONFIG_PVH), which QEMU needs to boot an uncompressed kernel")

// vmlinux is the uncompressed kernel unpacked from a bzImage.
type vmlinux struct {
	ELF         []byte
	Compression string // the bzImage payload's
	PVHEntry    uint64
}

// extractVmlinux unpacks the kernel in bzImage and checks that QEMU can
// boot it: an x86-64 ELF executable with a PVH entry note (errNoPVH when
// it has none).
func extractVmlinux(ctx context.Context, bzImage []byte) (vmlinux, error) {
	p, err := bzImagePayload(bzImage)
	if err != nil {
		return vmlinux{}, err
	}
	v := vmlinux{Compression: p.Compression}
	if v.ELF, err = p.decompress(ctx); err != nil {
		return v, err
	}
	f, err := elf.NewFile(bytes.NewReader(v.ELF))
	if err != nil {
		return v, fmt.Errorf("the %s payload holds %s, not an ELF kernel: %w", p.Compression, describe(v.ELF), err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC {
		return v, fmt.Errorf("the %s payload is an ELF %s %s %s, not an x86-64 executable kernel", p.Compression, f.Class, f.Machine, f.Type)
	}
	entry, ok, err := pvhEntry(f)
	switch {
	case err != nil:
		return v, fmt.Errorf("the kernel's ELF notes: %w", err)
	case !ok:
		return v, errNoPVH
	}
	v.PVHEntry = entry
	return v, nil
}
