// Package codec holds the building blocks of the compress and decompress
// workloads: deterministic test data, codecs, output sinks, and per-thread
// jobs whose timed call does nothing but codec work and sink writes.
package codec

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Codec names, as users type them (see catalog).
const (
	Zstd  = catalog.Zstd
	Gzip  = catalog.Gzip
	LZ4   = catalog.LZ4
	LZFSE = catalog.LZFSE
)

// Codecs returns the codecs available on this OS, in a stable order.
func Codecs() []string { return catalog.Codecs(runtime.GOOS) }

// CheckCodec returns an error naming the bad value and what is allowed when
// codec is not available here or level is not one of its levels.
func CheckCodec(codec string, level int) error {
	available := false
	for _, c := range Codecs() {
		available = available || c == codec
	}
	_, known := catalog.LookupCodec(codec)
	switch {
	case codec == LZFSE && !available:
		return fmt.Errorf("codec %q needs macOS libcompression; available here: %s", codec, strings.Join(Codecs(), ", "))
	case !known || !available:
		return fmt.Errorf("unknown codec %q: available here: %s", codec, strings.Join(Codecs(), ", "))
	}
	return CheckLevel(codec, level)
}

// CheckLevel checks a codec's name and level whatever this OS provides (see
// catalog.CheckLevel).
func CheckLevel(codec string, level int) error { return catalog.CheckLevel(codec, level) }

// Extension returns the file name extension for codec's output ("zst").
func Extension(codec string) string {
	if c, ok := catalog.LookupCodec(codec); ok {
		return c.Ext
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
