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
	zstdCodec  = catalog.Zstd
	gzipCodec  = catalog.Gzip
	lz4Codec   = catalog.LZ4
	lzfseCodec = catalog.LZFSE
)

// Codecs returns the codecs available on this OS, in a stable order.
func Codecs() []string { return catalog.Codecs(runtime.GOOS) }

// checkCodec returns an error naming the bad value and what is allowed when
// codec is not available here or level is not one of its levels.
func checkCodec(codec string, level int) error {
	available := false
	for _, c := range Codecs() {
		available = available || c == codec
	}
	_, known := catalog.LookupCodec(codec)
	switch {
	case codec == lzfseCodec && !available:
		return fmt.Errorf("codec %q needs macOS libcompression; available here: %s", codec, strings.Join(Codecs(), ", "))
	case !known || !available:
		return fmt.Errorf("unknown codec %q: available here: %s", codec, strings.Join(Codecs(), ", "))
	}
	return checkLevel(codec, level)
}

// checkLevel checks a codec's name and level whatever this OS provides (see
// catalog.CheckLevel).
func checkLevel(codec string, level int) error { return catalog.CheckLevel(codec, level) }

// extension returns the file name extension for codec's output ("zst").
func extension(codec string) string {
	if c, ok := catalog.LookupCodec(codec); ok {
		return c.Ext
	}
	return "bin"
}

// newEncoder returns a writer that compresses into w with codec at level (0:
// the codec's default). Close flushes the stream's end; it does not close w.
// Every encoder runs on the calling goroutine only: one stream is one thread
// of the workload, so the library must not spread it over cores.
func newEncoder(codec string, level int, w io.Writer) (io.WriteCloser, error) {
	if err := checkCodec(codec, level); err != nil {
		return nil, err
	}
	switch codec {
	case zstdCodec:
		zl := zstd.SpeedDefault
		if level != 0 {
			zl = zstd.EncoderLevelFromZstd(level)
		}
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zl), zstd.WithEncoderConcurrency(1))
	case gzipCodec:
		if level == 0 {
			level = gzip.DefaultCompression
		}
		return gzip.NewWriterLevel(w, level)
	case lz4Codec:
		zw := lz4.NewWriter(w)
		if err := zw.Apply(lz4.ConcurrencyOption(1), lz4.CompressionLevelOption(lz4Level(level))); err != nil {
			return nil, fmt.Errorf("lz4 level %d: %w", level, err)
		}
		return zw, nil
	default: // LZFSE; checkCodec let it through, so this OS has it
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

// newDecoder returns a reader of the data codec decompresses from r, on the
// calling goroutine only. Close releases the decoder; it does not close r.
func newDecoder(codec string, r io.Reader) (io.ReadCloser, error) {
	if err := checkCodec(codec, 0); err != nil {
		return nil, err
	}
	switch codec {
	case zstdCodec:
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return zstdDecoder{d}, nil
	case gzipCodec:
		return gzip.NewReader(r)
	case lz4Codec:
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
