package codec

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"
)

// Operations a plan can time.
const (
	Compress   = "compress"   // encode generated data into the sink
	Decompress = "decompress" // decode pre-compressed data into the sink
)

// errMismatch is wrapped by Verify's error when the sink's output does not
// decode back to the input.
var errMismatch = errors.New("output does not match input")

// Plan is what every thread of one compress or decompress cell shares: the
// virtual input file, the codec and the sink. Thread i works on part i of
// the file, an independent stream.
type Plan struct {
	Operation string  // Compress or Decompress
	Codec     string  // one of Codecs()
	Level     int     // codec level; 0 for the codec's default
	Size      int64   // bytes of the virtual input file, split over the threads
	Seed      uint64  // picks the file's bytes
	Ratio     float64 // the file's compressibility under zstd; see Generate
	Threads   int
	Sink      SinkSpec
}

// Validate checks the plan's values without touching the file system;
// errors name the bad value and what is allowed.
func (p Plan) Validate() error {
	if p.Operation != Compress && p.Operation != Decompress {
		return fmt.Errorf("unknown operation %q: allowed %s, %s", p.Operation, Compress, Decompress)
	}
	if err := checkCodec(p.Codec, p.Level); err != nil {
		return err
	}
	if err := checkRatio(p.Ratio); err != nil {
		return err
	}
	if p.Threads < 1 {
		return fmt.Errorf("%d threads: need at least 1", p.Threads)
	}
	if p.Size < int64(p.Threads) {
		return fmt.Errorf("size %d bytes for %d threads: need at least one byte per thread", p.Size, p.Threads)
	}
	return p.Sink.Validate()
}

// CheckSink verifies up front that the sink can take every thread's
// output; see SinkSpec.Check.
func (p Plan) CheckSink() error {
	return p.Sink.Check(p.Threads, p.RegionSize())
}

// Part returns where thread index's part of the file starts and how long
// it is. Parts differ in length by at most one byte.
func (p Plan) Part(index int) (offset, size int64) {
	base, extra := p.Size/int64(p.Threads), p.Size%int64(p.Threads)
	i := int64(index)
	offset = i*base + min(i, extra)
	size = base
	if i < extra {
		size++
	}
	return offset, size
}

// regionAlign keeps block-sink regions on MiB boundaries, which every
// device's sectors and the page cache divide.
const regionAlign = 1 << 20

// RegionSize is the room a block sink reserves for each thread's output:
// the largest part, or the most a codec can expand it to, rounded up to
// a MiB.
func (p Plan) RegionSize() int64 {
	largest := (p.Size + int64(p.Threads) - 1) / int64(p.Threads)
	if p.Operation == Compress {
		largest = compressBound(largest)
	}
	return (largest + regionAlign - 1) / regionAlign * regionAlign
}

// compressBound is an upper bound on the compressed size of n bytes under
// any codec here: incompressible data is stored with small per-block
// headers, far under 1/128 of the data, plus a frame's header and trailer.
func compressBound(n int64) int64 { return n + n/128 + 64<<10 }

// NewJob returns the job of thread index (0 <= index < Threads). The plan
// must be valid.
func (p Plan) NewJob(index int) (*Job, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if index < 0 || index >= p.Threads {
		return nil, fmt.Errorf("thread index %d: allowed 0..%d", index, p.Threads-1)
	}
	off, size := p.Part(index)
	return &Job{plan: p, index: index, offset: off, size: size}, nil
}

// Chunk sizes. runChunk bounds how long Run goes without looking at its
// context and reporting progress; it is large enough that doing so costs
// nothing measurable.
const (
	runChunk      = 1 << 20
	generateChunk = 4 << 20
	sinkBuffer    = 1 << 20
)

// Job is one thread's share of a plan. Its calls run on the calling
// goroutine only, start no goroutines, and must come in order:
//
//	Prepare (untimed) -> Run (timed) -> Verify (untimed) -> Close
//
// Prepare does everything that is not the measured work: it generates the
// thread's part, compresses it too for Decompress, opens the sink and
// builds the encoder or decoder. Run does only codec work and sink writes,
// then fsyncs the sink. Verify reads the output back and checks it against
// the input. A Job is used by one thread; it is not safe for concurrent use.
type Job struct {
	// Progress, when set, is called from Run between chunks of about a MiB
	// with the uncompressed bytes just processed (encoded for Compress,
	// decoded for Decompress), so the calls add up to the part's size. It
	// must be cheap: it runs inside the timed call.
	Progress func(n int64)

	plan   Plan
	index  int
	offset int64
	size   int64

	sink     Sink
	inputCRC uint32
	input    []byte         // Compress: the part; Decompress: the part compressed
	buffered *bufio.Writer  // Compress: between the encoder and a file or block sink
	encoder  io.WriteCloser // Compress
	decoder  io.ReadCloser  // Decompress
	chunk    []byte         // Decompress: Run's copy buffer
	ran      bool
	closed   bool
	result   RunResult
}

// RunResult is what Run measured besides the caller's own start instant.
type RunResult struct {
	BytesIn  int64 // bytes given to the codec: the part, or its compressed form
	BytesOut int64 // bytes written to the sink
	// CodecDone is when the codec had produced everything and the sink had
	// taken it; SyncDone is after the sink's fsync. Both carry the monotonic
	// clock, so SyncDone.Sub(CodecDone) is the fsync phase.
	CodecDone time.Time
	SyncDone  time.Time
}

// Index is the job's thread index.
func (j *Job) Index() int { return j.index }

// Part returns the job's offset and length in the virtual file.
func (j *Job) Part() (offset, size int64) { return j.offset, j.size }

// SinkName names the job's sink (after Prepare), for messages.
func (j *Job) SinkName() string {
	if j.sink == nil {
		return ""
	}
	return j.sink.Name()
}

// Prepare generates the job's input, opens its sink and builds its encoder
// or decoder, so that Run has nothing left to do but the measured work.
func (j *Job) Prepare(ctx context.Context) error {
	if j.sink != nil || j.closed {
		return errors.New("job already prepared")
	}
	data, err := j.generate(ctx)
	if err != nil {
		return err
	}
	j.inputCRC = crc32.Checksum(data, castagnoli())
	if j.plan.Operation == Decompress {
		if data, err = j.encodeToMemory(data); err != nil {
			return err
		}
	}
	j.input = data

	pattern := fmt.Sprintf("qoslab-%s-%d-*.", j.plan.Operation, j.index)
	if j.plan.Operation == Compress {
		pattern += extension(j.plan.Codec)
	} else {
		pattern += "raw"
	}
	if j.sink, err = j.plan.Sink.Open(j.index, j.plan.RegionSize(), pattern); err != nil {
		return err
	}

	if j.plan.Operation == Compress {
		var out io.Writer = j.sink
		if j.plan.Sink.Kind != SinkNull {
			// Some encoders (flate) write in small pieces; a syscall per
			// piece would time the kernel, not the codec.
			j.buffered = bufio.NewWriterSize(j.sink, sinkBuffer)
			out = j.buffered
		}
		j.encoder, err = newEncoder(j.plan.Codec, j.plan.Level, out)
		return err
	}
	j.chunk = make([]byte, runChunk)
	j.decoder, err = newDecoder(j.plan.Codec, plainReader{bytes.NewReader(j.input)})
	return err
}

// generate makes the job's part of the file, checking ctx between chunks.
func (j *Job) generate(ctx context.Context) ([]byte, error) {
	data := make([]byte, j.size)
	for off := int64(0); off < j.size; off += generateChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(off+generateChunk, j.size)
		if err := Generate(data[off:end], j.offset+off, j.plan.Seed, j.plan.Ratio); err != nil {
			return nil, err
		}
	}
	return data, nil
}

func (j *Job) encodeToMemory(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(compressBound(int64(len(data)))))
	enc, err := newEncoder(j.plan.Codec, j.plan.Level, &buf)
	if err != nil {
		return nil, err
	}
	if _, err := enc.Write(data); err != nil {
		return nil, fmt.Errorf("%s encode: %w", j.plan.Codec, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("%s encode: %w", j.plan.Codec, err)
	}
	// A copy of exactly the right size, so the job does not hold on to
	// the buffer's room for incompressible data.
	return bytes.Clone(buf.Bytes()), nil
}

// Run does the measured work: encode the part into the sink (Compress) or
// decode it into the sink (Decompress), then fsync the sink. It looks at
// ctx between chunks of about a MiB and stops with ctx's error. The caller
// takes the start instant just before calling Run.
func (j *Job) Run(ctx context.Context) (RunResult, error) {
	switch {
	case j.closed:
		return RunResult{}, errors.New("job closed")
	case j.sink == nil:
		return RunResult{}, errors.New("job not prepared: call Prepare before Run")
	case j.ran:
		return RunResult{}, errors.New("job already ran: a job's input is used once")
	}
	j.ran = true
	var err error
	if j.plan.Operation == Compress {
		err = j.runCompress(ctx)
	} else {
		err = j.runDecompress(ctx)
	}
	j.result.BytesOut = j.sink.Written()
	if err != nil {
		return j.result, err
	}
	if err := j.sink.Sync(); err != nil {
		return j.result, err
	}
	j.result.SyncDone = time.Now()
	return j.result, nil
}

func (j *Job) runCompress(ctx context.Context) error {
	for off := 0; off < len(j.input); off += runChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(off+runChunk, len(j.input))
		n, err := j.encoder.Write(j.input[off:end])
		j.result.BytesIn += int64(n)
		if err != nil {
			return fmt.Errorf("%s encode into %s: %w", j.plan.Codec, j.sink.Name(), err)
		}
		if j.Progress != nil {
			j.Progress(int64(n))
		}
	}
	err := j.encoder.Close()
	j.encoder = nil
	if err != nil {
		return fmt.Errorf("%s encode into %s: %w", j.plan.Codec, j.sink.Name(), err)
	}
	if j.buffered != nil {
		if err := j.buffered.Flush(); err != nil {
			return err // the sink's error names it
		}
	}
	j.result.CodecDone = time.Now()
	return nil
}

func (j *Job) runDecompress(ctx context.Context) error {
	// BytesIn is all of the compressed input: the decoder reads ahead, so
	// how much it has read at any instant means little.
	j.result.BytesIn = int64(len(j.input))
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := fill(j.decoder, j.chunk)
		if n > 0 {
			if _, err := j.sink.Write(j.chunk[:n]); err != nil {
				return err
			}
			if j.Progress != nil {
				j.Progress(int64(n))
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%s decode: %w", j.plan.Codec, rerr)
		}
	}
	j.result.CodecDone = time.Now()
	return nil
}

// fill reads into b until it is full or r fails, and returns r's error as
// is: unlike io.ReadFull, a decoder's own io.ErrUnexpectedEOF (truncated
// input) stays distinct from the end of the stream.
func fill(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Verify checks that what Run wrote decodes back to the input, by
// checksum (CRC-32C) and length. For a null sink, which keeps nothing, it
// repeats the codec work in memory instead. A mismatch wraps errMismatch.
func (j *Job) Verify(ctx context.Context) error {
	if !j.ran {
		return errors.New("job has not run: call Run before Verify")
	}
	if j.closed {
		return errors.New("job closed: call Verify before Close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var (
		output io.Reader // what should equal the input once decoded
		where  = j.sink.Name()
	)
	if j.plan.Sink.Kind == SinkNull {
		if j.plan.Operation == Compress {
			again, err := j.encodeToMemory(j.input)
			if err != nil {
				return err
			}
			if int64(len(again)) != j.result.BytesOut {
				return fmt.Errorf("%w: %s encoding of thread %d's part is %d bytes, but Run wrote %d to the null sink",
					errMismatch, j.plan.Codec, j.index, len(again), j.result.BytesOut)
			}
			output = bytes.NewReader(again)
		} else {
			output = bytes.NewReader(j.input)
		}
		where = "an in-memory " + j.plan.Operation + " repeat"
	} else {
		rc, err := j.sink.ReadBack()
		if err != nil {
			return err
		}
		defer rc.Close()
		output = bufio.NewReaderSize(rc, sinkBuffer)
	}

	decodes := j.plan.Operation == Compress || j.plan.Sink.Kind == SinkNull
	if decodes {
		dec, err := newDecoder(j.plan.Codec, output)
		if err != nil {
			return fmt.Errorf("%w: %s output in %s does not decode: %w", errMismatch, j.plan.Codec, where, err)
		}
		defer dec.Close()
		output = dec
	}
	h := crc32.New(castagnoli())
	n, err := io.Copy(h, output)
	if err != nil {
		return fmt.Errorf("%w: %s output in %s does not decode: %w", errMismatch, j.plan.Codec, where, err)
	}
	if n != j.size || h.Sum32() != j.inputCRC {
		return fmt.Errorf("%w: %s holds %d bytes with CRC-32C %08x after decoding; thread %d's input is %d bytes with CRC-32C %08x",
			errMismatch, where, n, h.Sum32(), j.index, j.size, j.inputCRC)
	}
	return nil
}

// Close releases the job's memory, codec state and sink; a file sink's
// output file is removed. It may be called at any point, more than once.
func (j *Job) Close() error {
	if j.closed {
		return nil
	}
	j.closed = true
	var errs []error
	if j.encoder != nil {
		// Run did not finish the stream. Closing the encoder releases what
		// it holds (libcompression's state and mapping); what it flushes
		// goes to output that is being thrown away, and so does its error.
		_ = j.encoder.Close()
		j.encoder = nil
	}
	if j.decoder != nil {
		errs = append(errs, j.decoder.Close())
		j.decoder = nil
	}
	if j.sink != nil {
		errs = append(errs, j.sink.Close())
	}
	j.input, j.chunk, j.buffered = nil, nil, nil
	return errors.Join(errs...)
}

// plainReader hides bytes.Reader's Len, which would make the zstd decoder
// decode a small input whole when it is created, outside the timed call.
type plainReader struct{ r io.Reader }

func (p plainReader) Read(b []byte) (int, error) { return p.r.Read(b) }

func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }
