//go:build unix

package codec

import (
	"errors"
	"fmt"
	"io"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file drives Apple libcompression's streaming API
// (compression_stream_init/process/destroy, <compression.h>). Only loading
// the library is darwin-specific (lzfse_darwin.go); the buffer handling here
// is portable so it is tested on Linux against a fake library.

// libcompression's constants, from <compression.h>.
const (
	compressionLZFSE          = 0x801
	compressionStreamEncode   = 0
	compressionStreamDecode   = 1
	compressionStreamFinalize = 0x0001

	compressionStatusOK    = 0
	compressionStatusError = -1
	compressionStatusEnd   = 1
)

// compressionStream mirrors struct compression_stream on 64-bit platforms:
// five 8-byte fields. The pointers are uintptrs because this struct and the
// buffers it points at live in mmap'd memory that the Go GC neither owns
// nor moves; C keeps them between calls.
type compressionStream struct {
	dstPtr  uintptr // uint8_t *dst_ptr: next byte to write
	dstSize uintptr // size_t dst_size: room left at dstPtr
	srcPtr  uintptr // const uint8_t *src_ptr: next byte to read
	srcSize uintptr // size_t src_size: bytes left at srcPtr
	state   uintptr // void *state: the library's own
}

// streamFuncs are libcompression's three stream functions, bound by purego
// on darwin and faked in tests.
type streamFuncs struct {
	init    func(stream *compressionStream, operation, algorithm int32) int32
	process func(stream *compressionStream, flags int32) int32
	destroy func(stream *compressionStream) int32
}

// libStream is one initialised compression_stream with its input and output
// buffers, all in one anonymous mapping.
type libStream struct {
	funcs   *streamFuncs
	mapping []byte
	s       *compressionStream
	in, out []byte
}

// openLibStream maps memory for the stream and its buffers (bufSize each)
// and initialises the stream for operation with LZFSE, the one algorithm
// qoslab takes from libcompression.
func openLibStream(funcs *streamFuncs, operation int32, bufSize int) (*libStream, error) {
	const algorithm = compressionLZFSE
	header := unix.Getpagesize() // keeps the buffers page-aligned
	mapping, err := unix.Mmap(-1, 0, header+2*bufSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes for a libcompression stream: %w", header+2*bufSize, err)
	}
	l := &libStream{
		funcs:   funcs,
		mapping: mapping,
		s:       (*compressionStream)(unsafe.Pointer(&mapping[0])), //nolint:gosec // G103: the C compression_stream lives in this mapping, outside Go's heap
		in:      mapping[header : header+bufSize : header+bufSize],
		out:     mapping[header+bufSize:],
	}
	if st := funcs.init(l.s, operation, algorithm); st != compressionStatusOK {
		_ = unix.Munmap(mapping)
		return nil, fmt.Errorf("compression_stream_init(operation %d, algorithm %#x) returned status %d", operation, algorithm, st)
	}
	return l, nil
}

// process points the stream at src (a slice of l.in) and all of l.out, runs
// one compression_stream_process, and reports how much of src it consumed
// and how many bytes of l.out it filled.
func (l *libStream) process(src []byte, finalize bool) (consumed, produced int, status int32) {
	l.s.srcPtr, l.s.srcSize = 0, 0
	if len(src) > 0 {
		l.s.srcPtr, l.s.srcSize = uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)) //nolint:gosec // G103: the library reads src through this address during the call
	}
	l.s.dstPtr, l.s.dstSize = uintptr(unsafe.Pointer(&l.out[0])), uintptr(len(l.out)) //nolint:gosec // G103: the library writes l.out (in the mapping) through this address
	var flags int32
	if finalize {
		flags = compressionStreamFinalize
	}
	status = l.funcs.process(l.s, flags)
	return len(src) - int(l.s.srcSize), len(l.out) - int(l.s.dstSize), status
}

// close destroys the stream and unmaps its memory; later calls do nothing.
func (l *libStream) close() error {
	if l.mapping == nil {
		return nil
	}
	var err error
	if st := l.funcs.destroy(l.s); st != compressionStatusOK {
		err = fmt.Errorf("compression_stream_destroy returned status %d", st)
	}
	if uerr := unix.Munmap(l.mapping); uerr != nil && err == nil {
		err = fmt.Errorf("unmap libcompression stream: %w", uerr)
	}
	l.mapping, l.s, l.in, l.out = nil, nil, nil, nil
	return err
}

// libStreamEncoder compresses what is written to it into w.
type libStreamEncoder struct {
	st      *libStream
	w       io.Writer
	pending int // bytes of st.in not yet given to the library
	err     error
}

func newLibStreamEncoder(funcs *streamFuncs, w io.Writer, bufSize int) (*libStreamEncoder, error) {
	st, err := openLibStream(funcs, compressionStreamEncode, bufSize)
	if err != nil {
		return nil, err
	}
	return &libStreamEncoder{st: st, w: w}, nil
}

func (e *libStreamEncoder) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.st.mapping == nil {
		return 0, errors.New("lzfse encoder: write after close")
	}
	written := 0
	for len(p) > 0 {
		n := copy(e.st.in[e.pending:], p)
		e.pending += n
		written += n
		p = p[n:]
		if e.pending == len(e.st.in) {
			if e.err = e.drain(false); e.err != nil {
				return written, e.err
			}
		}
	}
	return written, nil
}

// drain gives the pending input to the library and writes out all it
// produces; with finalize it goes on until the library ends the stream.
func (e *libStreamEncoder) drain(finalize bool) error {
	src := e.st.in[:e.pending]
	for {
		consumed, produced, status := e.st.process(src, finalize)
		src = src[consumed:]
		if status == compressionStatusError {
			return errors.New("lzfse encoder: compression_stream_process failed")
		}
		if produced > 0 {
			if _, err := e.w.Write(e.st.out[:produced]); err != nil {
				return err
			}
		}
		done := len(src) == 0 && produced < len(e.st.out) // all taken, nothing held back
		if finalize {
			done = status == compressionStatusEnd
		}
		if done {
			e.pending = 0
			return nil
		}
		if consumed == 0 && produced == 0 {
			return fmt.Errorf("lzfse encoder: compression_stream_process made no progress (status %d)", status)
		}
	}
}

// Close ends the stream, writes its last bytes and releases the library's
// state. It does not close w.
func (e *libStreamEncoder) Close() error {
	if e.st.mapping == nil {
		return e.err
	}
	if e.err == nil {
		e.err = e.drain(true)
	}
	if err := e.st.close(); err != nil && e.err == nil {
		e.err = err
	}
	return e.err
}

// libStreamDecoder decompresses what it reads from r.
type libStreamDecoder struct {
	st         *libStream
	r          io.Reader
	inStart    int // st.in[inStart:inEnd] is read but not yet decoded
	inEnd      int
	outStart   int // st.out[outStart:outEnd] is decoded but not yet returned
	outEnd     int
	srcEOF     bool // r is exhausted
	ended      bool // the library reported the end of the stream
	err        error
	closedRead bool
}

func newLibStreamDecoder(funcs *streamFuncs, r io.Reader, bufSize int) (*libStreamDecoder, error) {
	st, err := openLibStream(funcs, compressionStreamDecode, bufSize)
	if err != nil {
		return nil, err
	}
	return &libStreamDecoder{st: st, r: r}, nil
}

func (d *libStreamDecoder) Read(p []byte) (int, error) {
	if d.closedRead {
		return 0, errors.New("lzfse decoder: read after close")
	}
	for {
		if d.outStart < d.outEnd {
			n := copy(p, d.st.out[d.outStart:d.outEnd])
			d.outStart += n
			return n, nil
		}
		if d.err != nil {
			return 0, d.err
		}
		if d.ended {
			return 0, io.EOF
		}
		if len(p) == 0 {
			return 0, nil
		}
		if d.inStart == d.inEnd && !d.srcEOF {
			if d.err = d.fill(); d.err != nil {
				continue
			}
		}
		consumed, produced, status := d.st.process(d.st.in[d.inStart:d.inEnd], d.srcEOF)
		d.inStart += consumed
		d.outStart, d.outEnd = 0, produced
		switch {
		case status == compressionStatusError:
			d.err = errors.New("lzfse decoder: compression_stream_process failed: corrupt or truncated input")
		case status == compressionStatusEnd:
			d.ended = true
		case consumed == 0 && produced == 0:
			// The library wants more input than it has been given.
			switch {
			case d.srcEOF:
				d.err = fmt.Errorf("lzfse decoder: %w", io.ErrUnexpectedEOF)
			case d.inStart == 0 && d.inEnd == len(d.st.in):
				d.err = errors.New("lzfse decoder: compression_stream_process made no progress on a full buffer")
			default:
				d.err = d.fill()
			}
		}
	}
}

// fill moves unconsumed input to the front of st.in and reads more after it.
func (d *libStreamDecoder) fill() error {
	d.inEnd = copy(d.st.in, d.st.in[d.inStart:d.inEnd])
	d.inStart = 0
	for d.inEnd < len(d.st.in) {
		n, err := d.r.Read(d.st.in[d.inEnd:])
		d.inEnd += n
		if errors.Is(err, io.EOF) {
			d.srcEOF = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("lzfse decoder: read input: %w", err)
		}
		if n > 0 {
			return nil
		}
	}
	return nil
}

// Close releases the library's state. It does not close r.
func (d *libStreamDecoder) Close() error {
	d.closedRead = true
	return d.st.close()
}
