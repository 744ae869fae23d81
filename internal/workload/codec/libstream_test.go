//go:build unix

package codec

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeLibcompression stands in for libcompression with a trivial format:
// chunks of a length byte (1..127) and that many bytes XORed with 0x5a,
// ended by a zero length byte. Like the real library it reads and writes
// only through the stream's pointers, keeps state between calls (the
// encoder holds input back when the output is full), may stop early
// (perCall), and reports END when the stream's end is decoded.
type fakeLibcompression struct {
	bufSize int
	perCall int // most bytes moved per process call
	// wholeChunks makes the decoder refuse to start a chunk until all of
	// it is in the input, as a real decoder may need a whole block.
	wholeChunks bool
	failProcess bool // process returns COMPRESSION_STATUS_ERROR
	failInit    bool

	operation    int32
	held         []byte // encoder: input taken but not yet emitted
	inChunk      int    // decoder: bytes left in the current chunk
	ended        bool
	inits        int
	destroys     int
	sawFinalize  bool
	sawAlgorithm int32
}

func (f *fakeLibcompression) funcs() *streamFuncs {
	return &streamFuncs{init: f.init, process: f.process, destroy: f.destroy}
}

func (f *fakeLibcompression) init(s *compressionStream, operation, algorithm int32) int32 {
	f.inits++
	f.operation, f.sawAlgorithm = operation, algorithm
	if f.failInit {
		return compressionStatusError
	}
	*s = compressionStream{state: 1}
	return compressionStatusOK
}

func (f *fakeLibcompression) destroy(*compressionStream) int32 {
	f.destroys++
	return compressionStatusOK
}

// memory returns the stream's whole mapping, which the stream heads, and
// the offsets of its src and dst pointers in it.
func (f *fakeLibcompression) memory(s *compressionStream) (mem []byte, src, dst int) {
	base := uintptr(unsafe.Pointer(s))
	mem = unsafe.Slice((*byte)(unsafe.Pointer(s)), unix.Getpagesize()+2*f.bufSize)
	return mem, int(s.srcPtr - base), int(s.dstPtr - base)
}

func (f *fakeLibcompression) process(s *compressionStream, flags int32) int32 {
	if f.failProcess {
		return compressionStatusError
	}
	finalize := flags&compressionStreamFinalize != 0
	f.sawFinalize = f.sawFinalize || finalize
	mem, src, dst := f.memory(s)
	budget := f.perCall
	take := func(n int) []byte { // consume n input bytes
		if n == 0 {
			return nil // src may be a null pointer then
		}
		b := mem[src : src+n]
		src += n
		s.srcSize -= uintptr(n)
		budget -= n
		return b
	}
	put := func(b ...byte) {
		dst += copy(mem[dst:], b)
		s.dstSize -= uintptr(len(b))
	}
	defer func() {
		base := uintptr(unsafe.Pointer(s))
		if s.srcPtr != 0 {
			s.srcPtr = base + uintptr(src)
		}
		s.dstPtr = base + uintptr(dst)
	}()

	if f.operation == compressionStreamEncode {
		// Take input into the library's own state, then emit what fits.
		f.held = append(f.held, take(min(int(s.srcSize), budget))...)
		for len(f.held) > 0 && s.dstSize >= 2 {
			n := min(len(f.held), int(s.dstSize)-1, 127)
			put(byte(n))
			for _, c := range f.held[:n] {
				put(c ^ 0x5a)
			}
			f.held = f.held[n:]
		}
		if finalize && s.srcSize == 0 && len(f.held) == 0 && s.dstSize >= 1 {
			put(0)
			return compressionStatusEnd
		}
		return compressionStatusOK
	}

	for !f.ended && s.srcSize > 0 && s.dstSize > 0 && budget > 0 {
		if f.inChunk == 0 {
			n := int(mem[src])
			if f.wholeChunks && n > 0 && int(s.srcSize) < n+1 {
				break
			}
			take(1)
			if n == 0 {
				f.ended = true
				break
			}
			f.inChunk = n
			continue
		}
		n := min(f.inChunk, int(s.srcSize), int(s.dstSize), budget)
		for _, c := range take(n) {
			put(c ^ 0x5a)
		}
		f.inChunk -= n
	}
	switch {
	case f.ended:
		return compressionStatusEnd
	case finalize && s.srcSize == 0:
		return compressionStatusError // truncated
	}
	return compressionStatusOK
}

func fakeEncode(t *testing.T, f *fakeLibcompression, data []byte, writeSize int) []byte {
	t.Helper()
	var out bytes.Buffer
	enc, err := newLibStreamEncoder(f.funcs(), &out, f.bufSize)
	require.NoError(t, err)
	for p := data; len(p) > 0; {
		n := min(writeSize, len(p))
		written, err := enc.Write(p[:n])
		require.NoError(t, err)
		require.Equal(t, n, written)
		p = p[n:]
	}
	require.NoError(t, enc.Close())
	assert.Equal(t, 1, f.destroys, "Close must destroy the stream once")
	assert.True(t, f.sawFinalize, "Close must finalize")
	return out.Bytes()
}

func fakeDecode(t *testing.T, f *fakeLibcompression, r io.Reader) ([]byte, error) {
	t.Helper()
	dec, err := newLibStreamDecoder(f.funcs(), r, f.bufSize)
	require.NoError(t, err)
	out, err := io.ReadAll(dec)
	require.NoError(t, dec.Close())
	assert.Equal(t, 1, f.destroys, "Close must destroy the stream once")
	return out, err
}

func TestLibStreamRoundTrip(t *testing.T) {
	data := generated(t, 100_000, 0, 4, DefaultRatio)
	cases := []struct {
		name      string
		size      int
		bufSize   int
		perCall   int
		writeSize int
	}{
		{"empty", 0, 64, 1000, 1},
		{"one byte", 1, 64, 1000, 1},
		{"tiny buffers", 10_000, 16, 1000, 333},
		{"library stops early", 10_000, 4096, 7, 4096},
		{"writes bigger than the buffer", 100_000, 1000, 500, 30_000},
		{"byte by byte", 3000, 256, 1000, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := data[:c.size]
			enc := &fakeLibcompression{bufSize: c.bufSize, perCall: c.perCall}
			compressed := fakeEncode(t, enc, in, c.writeSize)
			assert.Equal(t, int32(compressionStreamEncode), enc.operation)
			assert.Equal(t, int32(compressionLZFSE), enc.sawAlgorithm)

			dec := &fakeLibcompression{bufSize: c.bufSize, perCall: c.perCall}
			got, err := fakeDecode(t, dec, bytes.NewReader(compressed))
			require.NoError(t, err)
			assert.Equal(t, int32(compressionStreamDecode), dec.operation)
			assert.True(t, bytes.Equal(in, got), "round trip of %d bytes gave %d", len(in), len(got))
		})
	}
}

func TestLibStreamDecoderRefillsWhenTheLibraryWantsMore(t *testing.T) {
	data := generated(t, 20_000, 0, 6, DefaultRatio)
	compressed := fakeEncode(t, &fakeLibcompression{bufSize: 4096, perCall: 1 << 20}, data, len(data))
	// One byte per read: the decoder must keep a partial chunk and append.
	dec := &fakeLibcompression{bufSize: 4096, perCall: 1 << 20, wholeChunks: true}
	got, err := fakeDecode(t, dec, iotest.OneByteReader(bytes.NewReader(compressed)))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))
}

func TestLibStreamDecoderErrors(t *testing.T) {
	data := generated(t, 5000, 0, 6, DefaultRatio)
	compressed := fakeEncode(t, &fakeLibcompression{bufSize: 4096, perCall: 1 << 20}, data, len(data))

	t.Run("truncated input", func(t *testing.T) {
		got, err := fakeDecode(t, &fakeLibcompression{bufSize: 4096, perCall: 1 << 20}, bytes.NewReader(compressed[:len(compressed)-10]))
		assert.ErrorContains(t, err, "truncated")
		assert.Less(t, len(got), len(data))
	})
	t.Run("truncated while the library waits for more", func(t *testing.T) {
		f := &fakeLibcompression{bufSize: 4096, perCall: 1 << 20, wholeChunks: true}
		_, err := fakeDecode(t, f, bytes.NewReader(compressed[:len(compressed)-10]))
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
	t.Run("no progress on a full buffer", func(t *testing.T) {
		// Chunks of 128 bytes never fit a 64-byte buffer.
		f := &fakeLibcompression{bufSize: 64, perCall: 1 << 20, wholeChunks: true}
		_, err := fakeDecode(t, f, bytes.NewReader(compressed))
		assert.ErrorContains(t, err, "no progress")
	})
	t.Run("library error", func(t *testing.T) {
		_, err := fakeDecode(t, &fakeLibcompression{bufSize: 4096, perCall: 1, failProcess: true}, bytes.NewReader(compressed))
		assert.ErrorContains(t, err, "compression_stream_process failed")
	})
	t.Run("source error", func(t *testing.T) {
		boom := errors.New("disk on fire")
		_, err := fakeDecode(t, &fakeLibcompression{bufSize: 4096, perCall: 1 << 20}, iotest.ErrReader(boom))
		assert.ErrorIs(t, err, boom)
	})
	t.Run("read after close", func(t *testing.T) {
		dec, err := newLibStreamDecoder((&fakeLibcompression{bufSize: 64, perCall: 1}).funcs(), bytes.NewReader(compressed), 64)
		require.NoError(t, err)
		require.NoError(t, dec.Close())
		require.NoError(t, dec.Close(), "a second Close does nothing")
		_, err = dec.Read(make([]byte, 10))
		assert.Error(t, err)
	})
}

func TestLibStreamEncoderErrors(t *testing.T) {
	t.Run("init fails", func(t *testing.T) {
		f := &fakeLibcompression{bufSize: 64, failInit: true}
		_, err := newLibStreamEncoder(f.funcs(), io.Discard, 64)
		assert.ErrorContains(t, err, "compression_stream_init")
		assert.Zero(t, f.destroys, "a stream that did not initialise is not destroyed")
	})
	t.Run("process fails", func(t *testing.T) {
		f := &fakeLibcompression{bufSize: 64, perCall: 1, failProcess: true}
		enc, err := newLibStreamEncoder(f.funcs(), io.Discard, 64)
		require.NoError(t, err)
		_, err = enc.Write(make([]byte, 200))
		assert.ErrorContains(t, err, "compression_stream_process failed")
		assert.Error(t, enc.Close(), "Close reports the failure")
		assert.Equal(t, 1, f.destroys)
	})
	t.Run("destination fails", func(t *testing.T) {
		boom := errors.New("sink gone")
		f := &fakeLibcompression{bufSize: 64, perCall: 1 << 20}
		enc, err := newLibStreamEncoder(f.funcs(), failingWriter{boom}, 64)
		require.NoError(t, err)
		_, err = enc.Write(make([]byte, 200))
		assert.ErrorIs(t, err, boom)
		assert.ErrorIs(t, enc.Close(), boom)
	})
	t.Run("write after close", func(t *testing.T) {
		f := &fakeLibcompression{bufSize: 64, perCall: 1 << 20}
		enc, err := newLibStreamEncoder(f.funcs(), io.Discard, 64)
		require.NoError(t, err)
		require.NoError(t, enc.Close())
		require.NoError(t, enc.Close(), "a second Close does nothing")
		_, err = enc.Write([]byte("late"))
		assert.Error(t, err)
		assert.Equal(t, 1, f.destroys)
	})
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }
