package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"slices"

	"github.com/ulikunitz/xz/lzma"
)

// The .xz container (https://tukaani.org/xz/xz-file-format.txt), read here
// rather than by github.com/ulikunitz/xz's xz package because that package
// reads only blocks whose one filter is LZMA2, while the kernel's build
// (scripts/xz_wrap.sh: xz --check=crc32 --x86 --lzma2) puts the x86 BCJ
// filter in front of it. The LZMA2 decoder is the library's; the container
// and the BCJ filter are below.

const (
	xzHeaderLen = 12 // stream header and footer
	xzFilterBCJ = 0x04
	xzFilterLZ2 = 0x21
)

var xzMagic = []byte{0xfd, '7', 'z', 'X', 'Z', 0}

// xzCheck is the hash of check type check and its size: none, CRC32,
// CRC64 or SHA-256, the types xz defines (the others are reserved).
func xzCheck(check byte) (h hash.Hash, size int, err error) {
	switch check {
	case 0:
		return nil, 0, nil
	case 1:
		return crc32.NewIEEE(), 4, nil
	case 4:
		return crc64.New(crc64.MakeTable(crc64.ECMA)), 8, nil
	case 10:
		return sha256.New(), 32, nil
	}
	return nil, 0, fmt.Errorf("check type %#x is reserved: xz defines none, CRC32, CRC64 and SHA-256", check)
}

// xzBlock is what a block header says.
type xzBlock struct {
	headerLen        int
	compressedSize   int64 // -1 when the header does not say
	uncompressedSize int64 // -1 when the header does not say
	dictSize         int64 // the LZMA2 filter's dictionary
	bcj              bool  // the x86 BCJ filter is in front of LZMA2
	bcjStart         uint32
}

// unxz decompresses stream, one .xz stream, and checks it: each block's
// check, the index and the footer. Only stream padding (zero bytes) may
// follow it. The output is at most limit bytes; sizeHint, when it is right,
// saves growing the output.
func unxz(ctx context.Context, stream []byte, sizeHint, limit int) ([]byte, error) {
	flags, err := xzStreamHeader(stream)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, min(max(sizeHint, 0), limit))
	var records []xzRecord
	pos := xzHeaderLen
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if pos >= len(stream) {
			return nil, errors.New("xz: the stream ends before its index")
		}
		if stream[pos] == 0 {
			break // the index
		}
		var rec xzRecord
		out, rec, pos, err = unxzBlock(ctx, stream, pos, flags[1], len(records)+1, out, limit)
		if err != nil {
			return nil, err
		}
		records = append(records, rec)
	}
	if err := checkXZIndex(stream, pos, flags, records); err != nil {
		return nil, err
	}
	return out, nil
}

// xzStreamHeader checks the stream header and returns its flags, the second
// of which names the blocks' check.
func xzStreamHeader(stream []byte) ([]byte, error) {
	if len(stream) < 2*xzHeaderLen || !bytes.HasPrefix(stream, xzMagic) {
		return nil, errors.New("xz: no xz stream header")
	}
	flags := stream[6:8]
	if crc32.ChecksumIEEE(flags) != binary.LittleEndian.Uint32(stream[8:12]) {
		return nil, errors.New("xz: the stream header's CRC32 does not match")
	}
	if flags[0] != 0 || flags[1]&0xf0 != 0 {
		return nil, fmt.Errorf("xz: stream flags %#x %#x are reserved (a newer xz format?)", flags[0], flags[1])
	}
	if _, _, err := xzCheck(flags[1]); err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	return flags, nil
}

// xzRecord is a block's sizes as the index lists them: unpadded is its
// header, compressed data and check, without the padding before the check.
type xzRecord struct{ unpadded, uncompressed int64 }

// unxzBlock decodes block number nth, at pos in stream, appending its data
// to out, and checks it against its header and its check; next is where
// the block ends.
func unxzBlock(ctx context.Context, stream []byte, pos int, check byte, nth int, out []byte, limit int) (_ []byte, _ xzRecord, next int, _ error) {
	blk, err := parseXZBlockHeader(stream[pos:])
	if err != nil {
		return nil, xzRecord{}, 0, fmt.Errorf("xz: block %d at %d: %w", nth, pos, err)
	}
	dataAt := pos + blk.headerLen
	src := bytes.NewReader(stream[dataAt:])
	lz, err := lzma.Reader2Config{DictCap: int(min(blk.dictSize, int64(limit)))}.NewReader2(src)
	if err != nil {
		return nil, xzRecord{}, 0, fmt.Errorf("xz: block %d: LZMA2: %w", nth, err)
	}
	start := len(out)
	out, err = appendAll(ctx, out, lz, limit)
	if err != nil {
		return nil, xzRecord{}, 0, fmt.Errorf("xz: block %d: LZMA2: %w", nth, err)
	}
	data := out[start:]
	compressed := int64(len(stream)-dataAt) - int64(src.Len())
	if blk.compressedSize >= 0 && blk.compressedSize != compressed {
		return nil, xzRecord{}, 0, fmt.Errorf("xz: block %d holds %d compressed bytes, its header says %d", nth, compressed, blk.compressedSize)
	}
	if blk.uncompressedSize >= 0 && blk.uncompressedSize != int64(len(data)) {
		return nil, xzRecord{}, 0, fmt.Errorf("xz: block %d decompresses to %d bytes, its header says %d", nth, len(data), blk.uncompressedSize)
	}
	if blk.bcj {
		unBCJX86(data, blk.bcjStart)
	}
	pos = dataAt + int(compressed)
	for ; pos%4 != 0; pos++ {
		if pos >= len(stream) || stream[pos] != 0 {
			return nil, xzRecord{}, 0, fmt.Errorf("xz: block %d: bad block padding", nth)
		}
	}
	h, checkLen, _ := xzCheck(check)
	if pos+checkLen > len(stream) {
		return nil, xzRecord{}, 0, fmt.Errorf("xz: block %d: the stream ends in its check", nth)
	}
	if h != nil {
		h.Write(data)
		sum := h.Sum(nil)
		if check != 10 {
			// CRC32 and CRC64 are stored little-endian.
			for i, j := 0, len(sum)-1; i < j; i, j = i+1, j-1 {
				sum[i], sum[j] = sum[j], sum[i]
			}
		}
		if !bytes.Equal(sum, stream[pos:pos+checkLen]) {
			return nil, xzRecord{}, 0, fmt.Errorf("xz: block %d: the data does not match its check (corrupt, or a decoder bug)", nth)
		}
	}
	return out, xzRecord{int64(blk.headerLen) + compressed + int64(checkLen), int64(len(data))}, pos + checkLen, nil
}

// checkXZIndex checks the index at pos, which lists every block's sizes,
// against the blocks read, and the stream footer after it.
func checkXZIndex(stream []byte, pos int, flags []byte, records []xzRecord) error {
	indexAt := pos
	r := &mbiReader{b: stream, pos: pos + 1}
	n := r.next()
	if r.err == nil && n != uint64(len(records)) {
		return fmt.Errorf("xz: the index lists %d blocks, the stream has %d", n, len(records))
	}
	for i, rec := range records {
		unpadded, uncompressed := r.next(), r.next()
		if r.err == nil && (unpadded != uint64(rec.unpadded) || uncompressed != uint64(rec.uncompressed)) {
			return fmt.Errorf("xz: the index gives block %d %d/%d bytes, the stream %d/%d", i+1, unpadded, uncompressed, rec.unpadded, rec.uncompressed)
		}
	}
	if r.err != nil {
		return fmt.Errorf("xz: index: %w", r.err)
	}
	pos = r.pos
	for ; (pos-indexAt)%4 != 0; pos++ {
		if pos >= len(stream) || stream[pos] != 0 {
			return errors.New("xz: bad index padding")
		}
	}
	if pos+4+xzHeaderLen > len(stream) {
		return errors.New("xz: the stream ends in its index")
	}
	if crc32.ChecksumIEEE(stream[indexAt:pos]) != binary.LittleEndian.Uint32(stream[pos:]) {
		return errors.New("xz: the index's CRC32 does not match")
	}
	pos += 4
	footer := stream[pos : pos+xzHeaderLen]
	switch {
	case crc32.ChecksumIEEE(footer[4:10]) != binary.LittleEndian.Uint32(footer):
		return errors.New("xz: the stream footer's CRC32 does not match")
	case string(footer[10:]) != "YZ":
		return errors.New("xz: no stream footer")
	case !bytes.Equal(footer[8:10], flags):
		return errors.New("xz: the stream footer's flags differ from the header's")
	case (int(binary.LittleEndian.Uint32(footer[4:]))+1)*4 != pos-indexAt:
		return errors.New("xz: the stream footer gives another index size")
	}
	pos += xzHeaderLen
	if len(bytes.Trim(stream[pos:], "\x00")) != 0 {
		return fmt.Errorf("xz: %d bytes after the stream are not stream padding", len(stream)-pos)
	}
	return nil
}

// parseXZBlockHeader reads the block header at the start of b.
func parseXZBlockHeader(b []byte) (xzBlock, error) {
	blk := xzBlock{headerLen: (int(b[0]) + 1) * 4, compressedSize: -1, uncompressedSize: -1}
	if blk.headerLen > len(b) {
		return blk, errors.New("the stream ends in the block header")
	}
	h := b[:blk.headerLen]
	if crc32.ChecksumIEEE(h[:len(h)-4]) != binary.LittleEndian.Uint32(h[len(h)-4:]) {
		return blk, errors.New("the block header's CRC32 does not match")
	}
	flags := h[1]
	if flags&0x3c != 0 {
		return blk, fmt.Errorf("block flags %#x are reserved (a newer xz format?)", flags)
	}
	r := &mbiReader{b: h[:len(h)-4], pos: 2}
	if flags&0x40 != 0 {
		blk.compressedSize = int64(r.next())
	}
	if flags&0x80 != 0 {
		blk.uncompressedSize = int64(r.next())
	}
	nfilters := int(flags&3) + 1
	for i := range nfilters {
		id, propLen := r.next(), r.next()
		if r.err != nil {
			break
		}
		if propLen > uint64(len(r.b)-r.pos) {
			return blk, errors.New("a filter's properties run past the block header")
		}
		props := r.b[r.pos : r.pos+int(propLen)]
		r.pos += int(propLen)
		last := i == nfilters-1
		switch {
		case id == xzFilterLZ2 && last:
			if len(props) != 1 || props[0] > 40 {
				return blk, fmt.Errorf("bad LZMA2 properties %x", props)
			}
			if bits := props[0]; bits == 40 {
				blk.dictSize = 0xffffffff
			} else {
				blk.dictSize = int64(2|bits&1) << (bits/2 + 11)
			}
		case id == xzFilterBCJ && !last && !blk.bcj:
			blk.bcj = true
			switch len(props) {
			case 0:
			case 4:
				blk.bcjStart = binary.LittleEndian.Uint32(props)
			default:
				return blk, fmt.Errorf("bad x86 BCJ properties %x", props)
			}
		default:
			return blk, fmt.Errorf("filter %#x in position %d of %d: only the x86 BCJ filter (%#x) followed by LZMA2 (%#x) is supported, which is what the kernel's build uses", id, i+1, nfilters, xzFilterBCJ, xzFilterLZ2)
		}
	}
	if r.err != nil {
		return blk, r.err
	}
	if len(bytes.Trim(r.b[r.pos:], "\x00")) != 0 {
		return blk, errors.New("bad block header padding")
	}
	return blk, nil
}

// mbiReader reads xz's variable-length integers: 7 bits per byte, least
// significant first, at most 9 bytes. The first error sticks.
type mbiReader struct {
	b   []byte
	pos int
	err error
}

func (r *mbiReader) next() uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	for i := 0; i < 9; i++ {
		if r.pos >= len(r.b) {
			r.err = errors.New("truncated integer")
			return 0
		}
		c := r.b[r.pos]
		r.pos++
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c == 0 && i > 0 {
				r.err = errors.New("integer not in its shortest form")
				return 0
			}
			return v
		}
	}
	r.err = errors.New("integer longer than 9 bytes")
	return 0
}

// appendAll appends what r gives to out, up to limit bytes in all.
func appendAll(ctx context.Context, out []byte, r io.Reader, limit int) ([]byte, error) {
	for {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if len(out) == cap(out) {
			if len(out) >= limit {
				var one [1]byte
				n, err := io.ReadFull(r, one[:])
				switch {
				case n > 0:
					return out, fmt.Errorf("more than %d MiB uncompressed", limit>>20)
				case err == io.EOF:
					return out, nil
				}
				return out, err
			}
			out = slices.Grow(out, min(max(len(out), 64<<10), limit-len(out)))
			out = out[:len(out):min(cap(out), limit)]
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// unBCJX86 undoes the x86 BCJ filter in place on buf, which starts at
// offset start of the filtered data. The filter turned the relative
// addresses of CALL (E8) and JMP (E9) instructions into absolute ones, which
// compress better; this turns them back. It is xz-embedded's bcj_x86
// (public domain, Lasse Collin and Igor Pavlov), run over the whole buffer
// at once: the last four bytes, which the filter cannot have converted, are
// left as they are.
func unBCJX86(buf []byte, start uint32) {
	maskToAllowed := [8]bool{true, true, true, false, true, false, false, false}
	maskToBitNum := [8]uint32{0, 1, 2, 2, 3, 3, 3, 3}
	// testMSByte: only addresses whose top byte is 0x00 or 0xFF, i.e.
	// within ±16 MiB, were converted.
	testMSByte := func(b byte) bool { return b == 0x00 || b == 0xff }
	if len(buf) <= 4 {
		return
	}
	size := len(buf) - 4
	prevPos := -1
	var prevMask uint32
	for i := 0; i < size; i++ {
		if buf[i]&0xfe != 0xe8 {
			continue
		}
		if d := i - prevPos; d > 3 {
			prevMask = 0
		} else {
			prevMask = (prevMask << (d - 1)) & 7
			if prevMask != 0 {
				b := buf[i+4-int(maskToBitNum[prevMask])]
				if !maskToAllowed[prevMask] || testMSByte(b) {
					prevPos = i
					prevMask = prevMask<<1 | 1
					continue
				}
			}
		}
		prevPos = i
		if !testMSByte(buf[i+4]) {
			prevMask = prevMask<<1 | 1
			continue
		}
		src := binary.LittleEndian.Uint32(buf[i+1:])
		var dest uint32
		for {
			dest = src - (start + uint32(i) + 5)
			if prevMask == 0 {
				break
			}
			j := maskToBitNum[prevMask] * 8
			if !testMSByte(byte(dest >> (24 - j))) {
				break
			}
			src = dest ^ (1<<(32-j) - 1)
		}
		dest &= 0x01ffffff
		dest |= -(dest & 0x01000000)
		binary.LittleEndian.PutUint32(buf[i+1:], dest)
		i += 4
	}
}
