package codec

import (
	"bytes"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The codec benchmarks run one stream at the codec's default level over
// 32 MiB of generated ratio-3 data, or over the file named by
// QOSLAB_BENCH_FILE (scripts/bench-zstd.sh uses that to compare with the
// zstd command on the same bytes). MB/s counts uncompressed bytes.

func benchInput(b *testing.B) []byte {
	b.Helper()
	if path := os.Getenv("QOSLAB_BENCH_FILE"); path != "" {
		data, err := os.ReadFile(path)
		require.NoError(b, err)
		return data
	}
	return generated(b, 32<<20, 0, 1, DefaultRatio)
}

// countingWriter discards, like a null sink, keeping the count.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

func benchmarkCompress(b *testing.B, codec string) {
	data := benchInput(b)
	b.SetBytes(int64(len(data)))
	var out countingWriter
	b.ResetTimer()
	for b.Loop() {
		out.n = 0
		enc, err := newEncoder(codec, 0, &out)
		require.NoError(b, err)
		for off := 0; off < len(data); off += runChunk {
			_, err = enc.Write(data[off:min(off+runChunk, len(data))])
			require.NoError(b, err)
		}
		require.NoError(b, enc.Close())
	}
	b.ReportMetric(float64(len(data))/float64(out.n), "ratio")
}

func benchmarkDecompress(b *testing.B, codec string) {
	data := benchInput(b)
	compressed := encode(b, codec, 0, data)
	b.SetBytes(int64(len(data)))
	buf := make([]byte, runChunk)
	b.ResetTimer()
	for b.Loop() {
		dec, err := newDecoder(codec, plainReader{bytes.NewReader(compressed)})
		require.NoError(b, err)
		var out countingWriter
		_, err = io.CopyBuffer(&out, dec, buf)
		require.NoError(b, err)
		require.NoError(b, dec.Close())
		require.Equal(b, int64(len(data)), out.n)
	}
	b.ReportMetric(float64(len(data))/float64(len(compressed)), "ratio")
}

func BenchmarkZstdCompress(b *testing.B)   { benchmarkCompress(b, zstdCodec) }
func BenchmarkZstdDecompress(b *testing.B) { benchmarkDecompress(b, zstdCodec) }
func BenchmarkGzipCompress(b *testing.B)   { benchmarkCompress(b, gzipCodec) }
func BenchmarkGzipDecompress(b *testing.B) { benchmarkDecompress(b, gzipCodec) }
func BenchmarkLZ4Compress(b *testing.B)    { benchmarkCompress(b, lz4Codec) }
func BenchmarkLZ4Decompress(b *testing.B)  { benchmarkDecompress(b, lz4Codec) }

func BenchmarkLZFSECompress(b *testing.B) {
	if !slices.Contains(Codecs(), lzfseCodec) {
		b.Skip("lzfse needs macOS libcompression")
	}
	benchmarkCompress(b, lzfseCodec)
}

func BenchmarkLZFSEDecompress(b *testing.B) {
	if !slices.Contains(Codecs(), lzfseCodec) {
		b.Skip("lzfse needs macOS libcompression")
	}
	benchmarkDecompress(b, lzfseCodec)
}
