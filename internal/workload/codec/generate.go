package codec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/klauspost/compress/zstd"

	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Compressibility limits of the generated data.
const (
	// DefaultRatio is the compression ratio the generated data has under zstd
	// at its default level unless asked otherwise.
	DefaultRatio = catalog.DefaultRatio
	// minRatio is incompressible (uniformly random) data.
	minRatio = catalog.MinRatio
	// maxRatio is the most compressible data the model is calibrated for.
	maxRatio = catalog.MaxRatio
)

// generateBlockSize is the unit of generation: every block of the virtual file
// is derived from (seed, block index) alone, so a block's bytes do not depend
// on how the file is split among threads.
const generateBlockSize = 64 << 10

// checkRatio returns an error naming ratio and the allowed range when the
// model cannot produce it.
func checkRatio(ratio float64) error { return catalog.CheckRatio(ratio) }

// Generate fills dst with the bytes at offset..offset+len(dst) of the virtual
// test file identified by seed and ratio. The file is the same bytes however
// it is cut: generating [0,n) equals generating [0,k) and [k,n) separately.
//
// The data mimics what an LZ compressor meets in practice: runs of literals
// drawn from a skewed, text-like alphabet, interleaved with back-references
// that copy earlier bytes of the same block. Ratio picks how much of each
// there is, from a table calibrated against klauspost zstd's default level;
// ratio 1 is uniformly random bytes.
//
// Generate allocates nothing, except one block of scratch space when offset
// is not a multiple of generateBlockSize.
func Generate(dst []byte, offset int64, seed uint64, ratio float64) error {
	if err := checkRatio(ratio); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("generate at offset %d: offset must not be negative", offset)
	}
	m := newDataModel(ratio)
	m.generate(dst, offset, seed)
	return nil
}

func (m *dataModel) generate(dst []byte, offset int64, seed uint64) {
	for len(dst) > 0 {
		block := offset / generateBlockSize
		within := int(offset % generateBlockSize)
		n := min(len(dst), generateBlockSize-within)
		if within == 0 {
			// A block's first n bytes do not depend on how many follow, so a
			// block the range cuts short is generated in place.
			m.fillBlock(dst[:n], seed, block)
		} else {
			scratch := make([]byte, within+n)
			m.fillBlock(scratch, seed, block)
			copy(dst, scratch[within:])
		}
		dst = dst[n:]
		offset += int64(n)
	}
}

// dataModel holds the parameters of the generator for one ratio.
type dataModel struct {
	random bool // ratio 1: every byte uniformly random
	// uniformRuns is the probability, in 1/2^32, that a literal run is
	// uniformly random bytes instead of drawn from the skewed alphabet.
	uniformRuns uint64
	// literalSpan and matchSpan: literal runs are 0..literalSpan-1 bytes
	// long, matches minMatch..minMatch+matchSpan-1.
	literalSpan uint64
	matchSpan   uint64
	alphabet    [256]byte
}

// minMatch is the shortest back-reference: shorter ones are not worth a
// sequence to zstd and would only look like literals.
const minMatch = 4

// calibrationPoint is one measured point of the model: knob is the model's
// single parameter (see modelAt), ratio what klauspost zstd at SpeedDefault
// achieved on 16 MiB of it. (The zstd command at -3 agrees within 1-2% up
// to ratio 6 and gives about 5% more at 10.)
type calibrationPoint struct{ knob, ratio float64 }

// calibration maps the knob to the achieved ratio, increasing in both. It was
// measured with ModelRatio: after changing the model or upgrading klauspost,
// print a fresh table with `go run ./scripts/calibrate` and paste it here
// (TestCalibrationTableIsMeasured fails until then).
var calibration = [...]calibrationPoint{
	{0.000, 1.009},
	{0.075, 1.012},
	{0.100, 1.016},
	{0.125, 1.049},
	{0.150, 1.109},
	{0.175, 1.132},
	{0.200, 1.181},
	{0.225, 1.243},
	{0.250, 1.311},
	{0.275, 1.384},
	{0.300, 1.512},
	{0.325, 1.540},
	{0.350, 1.558},
	{0.375, 1.587},
	{0.400, 1.622},
	{0.425, 1.668},
	{0.450, 1.721},
	{0.475, 1.805},
	{0.500, 1.904},
	{0.525, 2.037},
	{0.550, 2.225},
	{0.575, 2.434},
	{0.600, 2.723},
	{0.625, 3.015},
	{0.650, 3.432},
	{0.675, 3.863},
	{0.700, 4.360},
	{0.725, 4.887},
	{0.750, 5.440},
	{0.775, 6.160},
	{0.800, 6.790},
	{0.825, 7.414},
	{0.850, 8.159},
	{0.875, 8.964},
	{0.900, 9.311},
	{0.925, 10.221},
	{0.950, 10.560},
	{0.975, 10.978},
	{1.000, 11.489},
}

// ModelRatio is the ratio klauspost zstd at SpeedDefault achieves on size
// bytes of the data model at knob (0 to 1; seed 1, offset 0): a point of the
// calibration table.
func ModelRatio(knob float64, size int) (float64, error) {
	if knob < 0 || knob > 1 || size <= 0 {
		return 0, fmt.Errorf("model ratio: knob %g (want 0 to 1), size %d (want > 0)", knob, size)
	}
	buf := make([]byte, size)
	m := modelAt(knob)
	m.generate(buf, 0, 1)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return 0, err
	}
	defer func() { _ = enc.Close() }() // EncodeAll leaves nothing to flush
	return float64(size) / float64(len(enc.EncodeAll(buf, nil))), nil
}

func newDataModel(ratio float64) dataModel {
	if ratio <= minRatio {
		return dataModel{random: true}
	}
	return modelAt(knobFor(ratio))
}

// knobFor inverts the calibration table by linear interpolation.
func knobFor(ratio float64) float64 {
	c := calibration[:]
	if ratio <= c[0].ratio {
		return c[0].knob
	}
	for i := 1; i < len(c); i++ {
		if ratio <= c[i].ratio {
			f := (ratio - c[i-1].ratio) / (c[i].ratio - c[i-1].ratio)
			return c[i-1].knob + f*(c[i].knob-c[i-1].knob)
		}
	}
	return c[len(c)-1].knob
}

// The knob runs from 0 to 1. Up to uniformEnd it turns literal runs from
// uniformly random into skewed-alphabet text; beyond it literal runs
// shorten, so back-references take over, and matches lengthen.
//
// Back-references never stop altogether: klauspost zstd stores a block raw,
// without entropy-coding its literals, when matches save under 1/64 of it,
// and a model without them would jump from ratio 1 to 1.5 in one step.
const (
	uniformEnd      = 0.3
	longestLiteral  = 192.0 // mean literal run up to uniformEnd, in bytes
	shortestLiteral = 0.5   // mean literal run at knob 1
	shortMatch      = 12.0  // mean match length up to uniformEnd
	longMatch       = 64.0  // mean match length at knob 1
)

func modelAt(knob float64) dataModel {
	m := dataModel{alphabet: skewedAlphabet()}
	meanLit := longestLiteral
	meanMatch := shortMatch
	if knob < uniformEnd {
		m.uniformRuns = uint64((1 - knob/uniformEnd) * (1 << 32))
	} else {
		t := (knob - uniformEnd) / (1 - uniformEnd)
		meanLit = longestLiteral * math.Pow(shortestLiteral/longestLiteral, t)
		meanMatch = shortMatch + (longMatch-shortMatch)*t*t
	}
	m.literalSpan = uint64(2*meanLit) + 1
	m.matchSpan = uint64(2*(meanMatch-minMatch)) + 1
	return m
}

// textLetters are the skewed alphabet's symbols, most frequent first.
const textLetters = " etaoinsrhldcumfpgwybvkxjqzETAOINSRHLDCUMFPGWYBVKXJQZ0123456789.,;:-'\"()\n"

// skewedAlphabet spreads textLetters over 256 slots with Zipf-like weights
// (weight of the i-th letter ∝ 1/(i+2)), so a uniform byte indexes it and the
// literals come out with 72 symbols and about 5.4 bits of entropy:
// compressible by an entropy coder, as text is, but not by matching alone.
func skewedAlphabet() [256]byte {
	var a [256]byte
	var total float64
	for i := range len(textLetters) {
		total += 1 / float64(i+2)
	}
	slot := 0
	var acc float64
	for i := range len(textLetters) {
		acc += 1 / float64(i+2)
		end := int(math.Round(acc / total * 256))
		if end <= slot {
			end = slot + 1 // every letter appears at least once
		}
		for ; slot < end && slot < 256; slot++ {
			a[slot] = textLetters[i]
		}
	}
	for ; slot < 256; slot++ {
		a[slot] = textLetters[len(textLetters)-1]
	}
	return a
}

// splitmix64 is Vigna's SplitMix64 generator: tiny, fast and good enough to
// make test data, and its mixing function derives independent block seeds.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	return mix64(uint64(*s))
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a value in [0, n) from the high 32 bits of r.
func below(r, n uint64) uint64 { return ((r >> 32) * n) >> 32 }

// fillBlock writes the first len(b) bytes of block number block. Every
// random draw happens in the same order whatever len(b) is, so a shorter b
// gets a prefix of a longer one. The fast paths store whole 8-byte words and
// may scribble up to 7 bytes past the current run; those bytes are always
// rewritten by the next run, so the result is the same.
func (m *dataModel) fillBlock(b []byte, seed uint64, block int64) {
	rng := splitmix64(mix64(seed^mix64(uint64(block)+0x632be59bd9b4e019)) + uint64(block))
	if m.random {
		fillRandom(b, &rng)
		return
	}
	a := &m.alphabet
	pos := 0
	for pos < len(b) {
		r := rng.next()
		end := min(pos+int(below(r, m.literalSpan)), len(b))
		if uint64(uint32(r)) < m.uniformRuns {
			fillRandom(b[pos:end], &rng)
		} else if end+8 <= len(b) {
			for ; pos < end; pos += 8 {
				r := rng.next()
				binary.LittleEndian.PutUint64(b[pos:], uint64(a[byte(r)])|
					uint64(a[byte(r>>8)])<<8|uint64(a[byte(r>>16)])<<16|
					uint64(a[byte(r>>24)])<<24|uint64(a[byte(r>>32)])<<32|
					uint64(a[byte(r>>40)])<<40|uint64(a[byte(r>>48)])<<48|
					uint64(a[byte(r>>56)])<<56)
			}
		} else {
			for pos < end {
				r := rng.next()
				for i := 0; i < 8 && pos+i < end; i++ {
					b[pos+i] = a[byte(r>>(8*i))]
				}
				pos += 8
			}
		}
		pos = end
		if pos >= len(b) || pos == 0 {
			continue
		}
		r = rng.next()
		length := minMatch + int(below(r, m.matchSpan))
		// Distances are log-uniform from 1 to 64 KiB, as in real data where
		// near repeats are commoner than far ones.
		bits := 1 + uint(r&15)
		dist := 1 + int((r>>4)&(1<<bits-1))
		if dist > pos {
			dist = 1 + int(below(r<<16, uint64(pos)))
		}
		end = min(pos+length, len(b))
		from := pos - dist
		if dist >= 8 && end+8 <= len(b) {
			// Each word read lies at least 8 bytes behind the write, so
			// it is already final.
			for i := 0; pos+i < end; i += 8 {
				binary.LittleEndian.PutUint64(b[pos+i:], binary.LittleEndian.Uint64(b[from+i:]))
			}
			pos = end
			continue
		}
		// An overlapping match repeats its first dist bytes, as an LZ
		// decoder would; copying from the fixed start doubles the
		// repeated stretch each round.
		for pos < end {
			pos += copy(b[pos:end], b[from:pos])
		}
	}
}

func fillRandom(b []byte, rng *splitmix64) {
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, rng.next())
		b = b[8:]
	}
	if len(b) > 0 {
		r := rng.next()
		for i := range b {
			b[i] = byte(r >> (8 * i))
		}
	}
}
