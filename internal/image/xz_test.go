package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"hash/crc64"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz/lzma"
)

// bcjX86Encode applies the x86 BCJ filter in place, as xz --x86 does: it is
// liblzma's x86_code (simple/x86.c, public domain) encoding, a formulation
// independent of the decoder's (xz-embedded's), so that a round trip tests
// one against the other.
func bcjX86Encode(buf []byte, nowPos uint32) {
	maskToAllowed := [8]bool{true, true, true, false, true, false, false, false}
	maskToBitNumber := [8]uint32{0, 1, 2, 2, 3, 3, 3, 3}
	test := func(b byte) bool { return b == 0 || b == 0xff }
	if len(buf) < 5 {
		return
	}
	var prevMask uint32
	prevPos := nowPos - 5
	limit := len(buf) - 5
	for pos := 0; pos <= limit; {
		b := buf[pos]
		if b != 0xe8 && b != 0xe9 {
			pos++
			continue
		}
		offset := nowPos + uint32(pos) - prevPos
		prevPos = nowPos + uint32(pos)
		if offset > 5 {
			prevMask = 0
		} else {
			for range offset {
				prevMask &= 0x77
				prevMask <<= 1
			}
		}
		b = buf[pos+4]
		if !test(b) || !maskToAllowed[(prevMask>>1)&7] || prevMask>>1 >= 0x10 {
			pos++
			prevMask |= 1
			if test(b) {
				prevMask |= 0x10
			}
			continue
		}
		src := binary.LittleEndian.Uint32(buf[pos+1:])
		var dest uint32
		for {
			dest = src + nowPos + uint32(pos) + 5
			if prevMask == 0 {
				break
			}
			i := maskToBitNumber[prevMask>>1]
			if !test(byte(dest >> (24 - i*8))) {
				break
			}
			src = dest ^ (1<<(32-i*8) - 1)
		}
		buf[pos+4] = byte(^((dest >> 24 & 1) - 1))
		buf[pos+3] = byte(dest >> 16)
		buf[pos+2] = byte(dest >> 8)
		buf[pos+1] = byte(dest)
		pos += 5
		prevMask = 0
	}
}

func appendMBI(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// xzCheckOf is raw's check of type check, as an .xz block stores it.
func xzCheckOf(check byte, raw []byte) []byte {
	le := binary.LittleEndian
	switch check {
	case 1:
		return le.AppendUint32(nil, crc32.ChecksumIEEE(raw))
	case 4:
		return le.AppendUint64(nil, crc64.Checksum(raw, crc64.MakeTable(crc64.ECMA)))
	case 10:
		s := sha256.Sum256(raw)
		return s[:]
	}
	return nil
}

// xzStream is an .xz stream of raw: one block of LZMA2 (a 1 MiB
// dictionary), behind the x86 BCJ filter when bcj, with check type check
// (0 none, 1 CRC32, 4 CRC64, 10 SHA-256).
func xzStream(t testing.TB, raw []byte, bcj bool, check byte) []byte {
	t.Helper()
	data := bytes.Clone(raw)
	if bcj {
		bcjX86Encode(data, 0)
	}
	var lz bytes.Buffer
	w, err := lzma.Writer2Config{DictCap: 1 << 20}.NewWriter2(&lz)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	le := binary.LittleEndian
	flags := []byte{0, check}
	s := append(bytes.Clone(xzMagic), flags...)
	s = le.AppendUint32(s, crc32.ChecksumIEEE(flags))

	h := []byte{0, 0}
	if bcj {
		h[1] = 1 // two filters
		h = append(h, xzFilterBCJ, 0)
	}
	h = append(h, xzFilterLZ2, 1, 16) // 16: a 1 MiB dictionary
	for len(h)%4 != 0 {
		h = append(h, 0)
	}
	h[0] = byte((len(h)+4)/4 - 1)
	h = le.AppendUint32(h, crc32.ChecksumIEEE(h))
	s = append(s, h...)
	s = append(s, lz.Bytes()...)
	for len(s)%4 != 0 {
		s = append(s, 0)
	}
	sum := xzCheckOf(check, raw)
	s = append(s, sum...)

	idx := appendMBI(appendMBI([]byte{0, 1}, uint64(len(h)+lz.Len()+len(sum))), uint64(len(raw)))
	for len(idx)%4 != 0 {
		idx = append(idx, 0)
	}
	idx = le.AppendUint32(idx, crc32.ChecksumIEEE(idx))
	s = append(s, idx...)
	footer := append(le.AppendUint32(nil, uint32(len(idx)/4-1)), flags...)
	s = le.AppendUint32(s, crc32.ChecksumIEEE(footer))
	return append(append(s, footer...), 'Y', 'Z')
}

// x86ish is n bytes dense in what the BCJ filter converts: CALL and JMP
// opcodes, followed by addresses near 0 or near -1 in every combination.
func x86ish(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		switch r.IntN(5) {
		case 0:
			b[i] = 0xe8 + byte(r.IntN(2))
		case 1:
			b[i] = 0
		case 2:
			b[i] = 0xff
		default:
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

func TestBCJX86RoundTrip(t *testing.T) {
	raw := x86ish(1 << 16)
	for _, start := range []uint32{0, 0x1000, 0xfffffff0} {
		enc := bytes.Clone(raw)
		bcjX86Encode(enc, start)
		require.NotEqual(t, raw, enc, "the filter converted something")
		unBCJX86(enc, start)
		assert.Equal(t, raw, enc, "start %#x", start)
	}
	// A call at 0 whose target the filter made absolute (0x35) gets its
	// relative one back: 0x35 less the 5 bytes of the instruction.
	call := []byte{0xe8, 0x35, 0, 0, 0, 0x90, 0x90, 0x90, 0x90}
	unBCJX86(call, 0)
	assert.Equal(t, []byte{0xe8, 0x30, 0, 0, 0, 0x90, 0x90, 0x90, 0x90}, call)
	short := []byte{0xe8, 1, 2, 3}
	unBCJX86(short, 0)
	assert.Equal(t, []byte{0xe8, 1, 2, 3}, short, "too short to hold a converted call")
}

func TestUnxz(t *testing.T) {
	raw := x86ish(300_000)
	for _, tc := range []struct {
		name  string
		bcj   bool
		check byte
	}{
		{"BCJ+LZMA2, CRC32 (the kernel's)", true, 1},
		{"LZMA2, CRC64", false, 4},
		{"BCJ+LZMA2, SHA-256", true, 10},
		{"LZMA2, no check", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := xzStream(t, raw, tc.bcj, tc.check)
			got, err := unxz(context.Background(), s, len(raw), maxKernelBytes)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(raw, got), "%d bytes back, %d in", len(got), len(raw))
			got, err = unxz(context.Background(), append(s, 0, 0, 0, 0), 0, maxKernelBytes)
			require.NoError(t, err, "stream padding is allowed")
			assert.Len(t, got, len(raw))
		})
	}
}

func TestUnxzRejects(t *testing.T) {
	raw := x86ish(50_000)
	good := xzStream(t, raw, true, 1)
	// The first block header is at 12; its data starts 4 bytes in the
	// header's size later.
	dataAt := xzHeaderLen + (int(good[xzHeaderLen])+1)*4
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, tc := range []struct {
		name, want string
		stream     []byte
	}{
		{"not xz", "no xz stream header", []byte("hello, this is not xz at all")},
		{"header CRC", "stream header's CRC32", mod(func(b []byte) []byte { b[8] ^= 1; return b })},
		{"reserved check type", "check type 0x2 is reserved", mod(func(b []byte) []byte {
			b[7] = 2
			binary.LittleEndian.PutUint32(b[8:], crc32.ChecksumIEEE(b[6:8]))
			return b
		})},
		{"block header CRC", "block header's CRC32", mod(func(b []byte) []byte { b[xzHeaderLen+3] ^= 1; return b })},
		{"corrupt data", "block 1", mod(func(b []byte) []byte { b[dataAt+200] ^= 0x40; return b })},
		{"wrong check", "does not match its check", mod(func(b []byte) []byte {
			// The check is the 4 bytes before the index, which starts
			// with a 0 indicator and 1 record: find it from the end.
			footer := len(b) - xzHeaderLen
			idx := footer - (int(binary.LittleEndian.Uint32(b[footer+4:]))+1)*4
			b[idx-1] ^= 1
			return b
		})},
		{"truncated", "", good[:len(good)-20]},
		{"garbage after", "not stream padding", append(bytes.Clone(good), 1, 2, 3, 4)},
		{"too big", "more than", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := maxKernelBytes
			s := tc.stream
			if s == nil {
				s, limit = good, len(raw)-1
			}
			_, err := unxz(context.Background(), s, 0, limit)
			require.Error(t, err)
			assert.ErrorContains(t, err, "xz")
			assert.ErrorContains(t, err, tc.want)
		})
	}

	// A filter other than BCJ and LZMA2: delta (0x03) in front.
	h := []byte{0, 1, 0x03, 1, 0, xzFilterLZ2, 1, 16}
	for len(h)%4 != 0 {
		h = append(h, 0)
	}
	h[0] = byte((len(h)+4)/4 - 1)
	h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h))
	_, err := parseXZBlockHeader(h)
	assert.ErrorContains(t, err, "filter 0x3 in position 1 of 2: only the x86 BCJ filter (0x4) followed by LZMA2 (0x21)")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = unxz(ctx, good, 0, maxKernelBytes)
	assert.ErrorIs(t, err, context.Canceled)
}

// What the xz tool writes with the x86 filter, as the kernel's build
// calls it, decodes to what went in (when the tool is installed).
func TestUnxzFromTheXZTool(t *testing.T) {
	xz, err := exec.LookPath("xz")
	if err != nil {
		t.Skip("the xz tool is not installed (sudo apt-get install xz-utils); the other tests use streams made here")
	}
	raw := x86ish(1 << 20)
	for _, args := range [][]string{
		{"--check=crc32", "--x86", "--lzma2=dict=32MiB"}, // scripts/xz_wrap.sh
		{"--check=crc64", "--lzma2=preset=1"},
		{"--check=sha256", "--x86", "--lzma2=preset=6", "--block-size=300000"}, // several blocks
	} {
		cmd := exec.Command(xz, append([]string{"--format=xz", "--stdout"}, args...)...)
		cmd.Stdin = bytes.NewReader(raw)
		s, err := cmd.Output()
		require.NoError(t, err, "xz %v", args)
		got, err := unxz(context.Background(), s, 0, maxKernelBytes)
		require.NoError(t, err, "xz %v", args)
		assert.True(t, bytes.Equal(raw, got), "xz %v: %d bytes back, %d in", args, len(got), len(raw))
	}
}
