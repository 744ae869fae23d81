// Package codec holds the building blocks of the compress and decompress
// workloads: deterministic test data, codecs, output sinks, and per-thread
// jobs whose timed call does nothing but codec work and sink writes.
package codec

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec names, as users type them.
const (
	Zstd  = "zstd"
	Gzip  = "gzip"
	LZ4   = "lz4"
	LZFSE = "lzfse" // macOS only, through libcompression
)

// levels describes a codec's accepted levels. Level 0 always means the
// codec's default, which is what defaultLevel names for messages.
type levels struct {
	min, max     int
	defaultLevel string
	ext          string // file name extension of its output
}

var codecLevels = map[string]levels{
	Zstd:  {min: 1, max: 22, defaultLevel: "3", ext: "zst"},
	Gzip:  {min: 1, max: 9, defaultLevel: "5", ext: "gz"},
	LZ4:   {min: 1, max: 9, defaultLevel: "lz4's fast mode", ext: "lz4"},
	LZFSE: {min: 0, max: 0, defaultLevel: "its only level", ext: "lzfse"},
}

// Codecs returns the codecs available on this OS, in a stable order.
func Codecs() []string {
	c := []string{Zstd, Gzip, LZ4}
	if lzfseAvailable {
		c = append(c, LZFSE)
	}
	return c
}

// CheckCodec returns an error naming the bad value and what is allowed when
// codec is not available here or level is not one of its levels.
func CheckCodec(codec string, level int) error {
	available := false
	for _, c := range Codecs() {
		available = available || c == codec
	}
	_, known := codecLevels[codec]
	switch {
	case codec == LZFSE && !available:
		return fmt.Errorf("codec %q needs macOS libcompression; available here: %s", codec, strings.Join(Codecs(), ", "))
	case !known || !available:
		return fmt.Errorf("unknown codec %q: available here: %s", codec, strings.Join(Codecs(), ", "))
	}
	return CheckLevel(codec, level)
}

// CheckLevel checks a codec's name and level whatever this OS provides, so a
// controller can refuse a bad request before any target is asked.
func CheckLevel(codec string, level int) error {
	lv, known := codecLevels[codec]
	switch {
	case !known:
		names := make([]string, 0, len(codecLevels))
		for n := range codecLevels {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("unknown codec %q: allowed %s", codec, strings.Join(names, ", "))
	case level == 0:
		return nil
	case lv.max == 0:
		return fmt.Errorf("%s level %d: %s has no levels, use 0", codec, level, codec)
	case level < lv.min || level > lv.max:
		return fmt.Errorf("%s level %d: allowed %d..%d, or 0 for the default (%s)", codec, level, lv.min, lv.max, lv.defaultLevel)
	}
	return nil
}

// Extension returns the file name extension for codec's output ("zst").
func Extension(codec string) string {
	if lv, ok := codecLevels[codec]; ok {
		return lv.ext
	}
	return "bin"
}

// NewEncoder returns a writer that compresses into w with codec at level (0:
// the codec's default). Close flushes the stream's end; it does not close w.
// Every encoder runs on the calling goroutine only: one stream is one thread
// of the workload, so the library must not spread it over cores.
func NewEncoder(codec string, level int, w io.Writer) (io.WriteCloser, error) {
	if err := CheckCodec(codec, level); err != nil {
		return nil, err
	}
	switch codec {
	case Zstd:
		zl := zstd.SpeedDefault
		if level != 0 {
			zl = zstd.EncoderLevelFromZstd(level)
		}
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zl), zstd.WithEncoderConcurrency(1))
	case Gzip:
		if level == 0 {
			level = gzip.DefaultCompression
		}
		return gzip.NewWriterLevel(w, level)
	case LZ4:
		zw := lz4.NewWriter(w)
		if err := zw.Apply(lz4.ConcurrencyOption(1), lz4.CompressionLevelOption(lz4Level(level))); err != nil {
			return nil, fmt.Errorf("lz4 level %d: %w", level, err)
		}
		return zw, nil
	default: // LZFSE; CheckCodec let it through, so this OS has it
		return newLZFSEEncoder(w)
	}
}

// lz4Level maps 1..9 to lz4's level constants, which are powers of two.
func lz4Level(level int) lz4.CompressionLevel {
	if level == 0 {
		return lz4.Fast
	}
	return lz4.Level1 << (level - 1)
}

// NewDecoder returns a reader of the data codec decompresses from r, on the
// calling goroutine only. Close releases the decoder; it does not close r.
func NewDecoder(codec string, r io.Reader) (io.ReadCloser, error) {
	if err := CheckCodec(codec, 0); err != nil {
		return nil, err
	}
	switch codec {
	case Zstd:
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return zstdDecoder{d}, nil
	case Gzip:
		return gzip.NewReader(r)
	case LZ4:
		zr := lz4.NewReader(r)
		if err := zr.Apply(lz4.ConcurrencyOption(1)); err != nil {
			return nil, fmt.Errorf("lz4 decoder: %w", err)
		}
		return io.NopCloser(zr), nil
	default:
		return newLZFSEDecoder(r)
	}
}

// zstdDecoder gives zstd.Decoder's Close an error result.
type zstdDecoder struct{ d *zstd.Decoder }

func (z zstdDecoder) Read(p []byte) (int, error) { return z.d.Read(p) }

func (z zstdDecoder) Close() error {
	z.d.Close()
	return nil
}
