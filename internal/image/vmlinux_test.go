package image

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz/lzma"

	"github.com/qoslab/qoslab/internal/image/debkernel/debtest"
)

// Payloads compressed as the kernel's build compresses them (the size
// trailer included; gzip ends with the size itself, so debtest.Gzip is
// its payload).
func zstdPayload(t *testing.T, raw []byte) []byte {
	zw, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	defer zw.Close()
	return withSize(zw.EncodeAll(raw, nil), raw)
}

func lz4Payload(t *testing.T, raw []byte) []byte {
	var b bytes.Buffer
	zw := lz4.NewWriter(&b)
	require.NoError(t, zw.Apply(lz4.LegacyOption(true))) // lz4 -l, as the kernel's build
	_, err := zw.Write(raw)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.True(t, bytes.HasPrefix(b.Bytes(), []byte{0x02, 0x21, 0x4c, 0x18}), "a legacy frame")
	return withSize(b.Bytes(), raw)
}

func lzmaPayload(t *testing.T, raw []byte) []byte {
	var b bytes.Buffer
	// No size in the header and an end marker, as lzma -9 writes from a pipe.
	zw, err := lzma.WriterConfig{DictCap: 1 << 20, EOSMarker: true}.NewWriter(&b)
	require.NoError(t, err)
	_, err = zw.Write(raw)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return withSize(b.Bytes(), raw)
}

func TestExtractVmlinux(t *testing.T) {
	const ver = "6.1.0-test-amd64"
	kernel := makeKernelELF(ver,
		elfNote{"GNU", 3, []byte{1, 2, 3, 4, 5}}, // a build id, with padding after it
		elfNote{"Xen", 1, []byte{0, 0, 0, 0}},    // another Xen note
		pvhNote(0x1000abc),
	)
	for _, tc := range []struct {
		compression string
		payload     []byte
	}{
		{compressionXZ, withSize(xzStream(t, kernel, true, 1), kernel)},
		{compressionGzip, debtest.Gzip(t, kernel)},
		{compressionZstd, zstdPayload(t, kernel)},
		{compressionLZ4, lz4Payload(t, kernel)},
		{compressionLZMA, lzmaPayload(t, kernel)},
	} {
		t.Run(tc.compression, func(t *testing.T) {
			bz := makeBzImageWithPayload(ver, tc.payload)
			p, err := bzImagePayload(bz)
			require.NoError(t, err)
			assert.Equal(t, tc.compression, p.Compression)
			assert.Equal(t, tc.payload, p.Data, "the payload is where the setup header says")
			assert.Equal(t, uint32(len(kernel)), p.Size)

			v, err := extractVmlinux(context.Background(), bz)
			require.NoError(t, err)
			assert.Equal(t, kernel, v.ELF)
			assert.Equal(t, tc.compression, v.Compression)
			assert.Equal(t, uint64(0x1000abc), v.PVHEntry)
		})
	}
}

// bzip2 has no writer in Go: a stream made by `printf 'hello, kernel\n' | bzip2 -9`.
const bzip2Hello = "425a68393141592653592b4fee3d000003518000104004024d900020003100302006d46d02350c744f8bb9229c284815a7f71e80"

func TestBzip2Payload(t *testing.T) {
	z, err := hex.DecodeString(bzip2Hello)
	require.NoError(t, err)
	raw := []byte("hello, kernel\n")
	out, err := bzPayload{Compression: compressionBzip2, Data: withSize(z, raw), Size: uint32(len(raw))}.decompress(context.Background())
	require.NoError(t, err)
	assert.Equal(t, raw, out)
}

func TestExtractVmlinuxRejects(t *testing.T) {
	const ver = "6.1.0-test-amd64"
	kernel := makeKernelELF(ver, pvhNote(0x1000000))
	xzd := func(raw []byte) []byte { return withSize(xzStream(t, raw, true, 1), raw) }
	lyingSize := xzd(kernel)
	binary.LittleEndian.PutUint32(lyingSize[len(lyingSize)-4:], uint32(len(kernel)+1))
	oldProtocol := makeBzImageWithPayload(ver, xzd(kernel))
	binary.LittleEndian.PutUint16(oldProtocol[bootProtocolAt:], 0x0206)
	pastEnd := makeBzImageWithPayload(ver, xzd(kernel))
	binary.LittleEndian.PutUint32(pastEnd[payloadLengthAt:], uint32(len(pastEnd)))
	arm := makeKernelELF(ver, pvhNote(0x1000000))
	binary.LittleEndian.PutUint16(arm[18:], uint16(elf.EM_AARCH64))

	for _, tc := range []struct {
		name, want string
		bz         []byte
	}{
		{"no PVH note", "no PVH entry note (ELF note \"Xen\" type 18", makeBzImageWithPayload(ver, xzd(makeKernelELF(ver, elfNote{"Xen", 1, []byte{0, 0, 0, 0}})))},
		{"no notes at all", "no PVH entry note", makeBzImageWithPayload(ver, xzd(makeKernelELF(ver)))},
		{"type 18 under another name", "no PVH entry note", makeBzImageWithPayload(ver, xzd(makeKernelELF(ver, elfNote{"Linux", xenELFNotePhys32Entry, make([]byte, 8)})))},
		{"a 2-byte entry", "the PVH entry note has a 2-byte descriptor", makeBzImageWithPayload(ver, xzd(makeKernelELF(ver, elfNote{"Xen", xenELFNotePhys32Entry, []byte{1, 2}})))},
		{"not an ELF", "the xz payload holds something else, not an ELF kernel", makeBzImageWithPayload(ver, xzd(bytes.Repeat([]byte("kernel"), 100)))},
		{"an arm64 ELF", "not an x86-64 executable kernel", makeBzImageWithPayload(ver, xzd(arm))},
		{"size trailer disagrees", "decompresses to", makeBzImageWithPayload(ver, lyingSize)},
		{"no payload", "gives no payload", makeBzImage(ver)},
		{"old boot protocol", "boot protocol 2.06", oldProtocol},
		{"payload past the end", "past the end of the", pastEnd},
		{"unknown compression", "no compression the kernel's build uses", makeBzImageWithPayload(ver, withSize([]byte("not compressed at all"), kernel))},
		{"LZO", "lzo-compressed, which qoslab cannot decompress (it reads xz, gzip, zstd, lz4, lzma and bzip2)", makeBzImageWithPayload(ver, withSize([]byte("\x89LZO\x00\r\n\x1a\n"), kernel))},
		{"not a bzImage", "not an x86 bzImage (an ELF file", kernel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := extractVmlinux(context.Background(), tc.bz)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err := extractVmlinux(context.Background(), makeBzImageWithPayload(ver, xzd(makeKernelELF(ver))))
	assert.ErrorIs(t, err, errNoPVH)
}

func TestPVHEntry(t *testing.T) {
	entry := func(t *testing.T, b []byte) (uint64, bool, error) {
		f, err := elf.NewFile(bytes.NewReader(b))
		require.NoError(t, err)
		return pvhEntry(f)
	}
	e, ok, err := entry(t, makeKernelELF("v", elfNote{"Xen", xenELFNotePhys32Entry, []byte{0x00, 0x10, 0x20, 0x01}}))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, uint64(0x01201000), e, "a 4-byte descriptor")

	_, ok, err = entry(t, makeKernelELF("v", elfNote{"Xen", 17, make([]byte, 8)}))
	require.NoError(t, err)
	assert.False(t, ok, "another Xen note is not the PVH entry")

	// A note whose sizes run past its segment.
	b := makeKernelELF("v", pvhNote(0x1000000))
	noteOff := binary.LittleEndian.Uint64(b[64+56+8:])
	binary.LittleEndian.PutUint32(b[noteOff+4:], 4096)
	_, _, err = entry(t, b)
	assert.ErrorContains(t, err, "runs past its end")
}
