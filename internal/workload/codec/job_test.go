package codec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanPartsCoverTheFile(t *testing.T) {
	cases := []struct {
		size    int64
		threads int
	}{
		{1, 1}, {10, 3}, {3, 3}, {1 << 30, 7}, {1<<30 + 5, 8}, {100, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d bytes over %d", c.size, c.threads), func(t *testing.T) {
			p := Plan{Size: c.size, Threads: c.threads}
			next, smallest, largest := int64(0), c.size, int64(0)
			for i := range c.threads {
				off, size := p.Part(i)
				assert.Equal(t, next, off, "part %d starts where %d ended", i, i-1)
				assert.Positive(t, size)
				next = off + size
				smallest, largest = min(smallest, size), max(largest, size)
			}
			assert.Equal(t, c.size, next, "parts cover the file")
			assert.LessOrEqual(t, largest-smallest, int64(1))
		})
	}
}

func TestPlanRegionSize(t *testing.T) {
	for _, op := range []string{Compress, Decompress} {
		p := Plan{Operation: op, Size: 10<<20 + 3, Threads: 3}
		_, largest := p.Part(0)
		r := p.RegionSize()
		assert.Zero(t, r%regionAlign, "%s regions are MiB-aligned", op)
		if op == Compress {
			assert.GreaterOrEqual(t, r, compressBound(largest))
		} else {
			assert.GreaterOrEqual(t, r, largest)
		}
		assert.Less(t, r, compressBound(largest)+regionAlign, "%s regions waste less than a MiB", op)
	}
}

func validPlan(dir string) Plan {
	return Plan{
		Operation: Compress, Codec: zstdCodec, Size: 1 << 20, Seed: 1, Ratio: DefaultRatio, Threads: 2,
		Sink: SinkSpec{Kind: SinkFile, Path: dir},
	}
}

func TestPlanValidate(t *testing.T) {
	require.NoError(t, validPlan("/x").Validate())
	cases := []struct {
		name   string
		change func(*Plan)
		want   string
	}{
		{"operation", func(p *Plan) { p.Operation = "squash" }, `"squash"`},
		{"codec", func(p *Plan) { p.Codec = "rar" }, `"rar"`},
		{"level", func(p *Plan) { p.Level = 99 }, "99"},
		{"ratio", func(p *Plan) { p.Ratio = 0.5 }, "0.5"},
		{"threads", func(p *Plan) { p.Threads = 0 }, "0 threads"},
		{"size", func(p *Plan) { p.Size = 1 }, "at least one byte per thread"},
		{"sink", func(p *Plan) { p.Sink.Kind = "cloud" }, `"cloud"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := validPlan("/x")
			c.change(&p)
			err := p.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			_, err = p.NewJob(0)
			assert.Error(t, err, "NewJob validates too")
		})
	}
	_, err := validPlan("/x").NewJob(2)
	assert.ErrorContains(t, err, "allowed 0..1")
}

func TestPlanCheckSink(t *testing.T) {
	assert.NoError(t, validPlan(t.TempDir()).CheckSink())
	missing := filepath.Join(t.TempDir(), "gone")
	assert.ErrorContains(t, validPlan(missing).CheckSink(), missing)
}

// runJob takes a job through its whole life and returns what Run measured
// and what Progress reported.
func runJob(t *testing.T, p Plan, index int) (RunResult, int64) {
	t.Helper()
	ctx := context.Background()
	j, err := p.NewJob(index)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, j.Close()) })
	var progress int64
	j.Progress = func(n int64) { progress += n }
	require.NoError(t, j.Prepare(ctx))
	res, err := j.Run(ctx)
	require.NoError(t, err)
	require.NoError(t, j.Verify(ctx))
	return res, progress
}

func TestJobsRoundTripEveryCodecAndSink(t *testing.T) {
	for _, op := range []string{Compress, Decompress} {
		for _, codec := range Codecs() {
			for _, sink := range []string{SinkFile, SinkNull} {
				t.Run(op+" "+codec+" "+sink, func(t *testing.T) {
					dir := t.TempDir()
					p := Plan{
						Operation: op, Codec: codec, Size: 3<<20 + 17, Seed: 5, Ratio: DefaultRatio, Threads: 2,
						Sink: SinkSpec{Kind: sink, Path: dir},
					}
					require.NoError(t, p.CheckSink())
					for i := range p.Threads {
						_, size := p.Part(i)
						res, progress := runJob(t, p, i)
						assert.Equal(t, size, progress, "progress adds up to the part")
						assert.False(t, res.CodecDone.IsZero())
						assert.False(t, res.SyncDone.Before(res.CodecDone), "fsync ends after the codec")
						raw, packed := res.BytesIn, res.BytesOut
						if op == Decompress {
							raw, packed = packed, raw
						}
						assert.Equal(t, size, raw, "uncompressed side is the part")
						ratio := float64(raw) / float64(packed)
						assert.Greater(t, ratio, 1.5, "ratio-3 data compresses (%s got %.2f)", codec, ratio)
					}
				})
			}
		}
	}
}

func TestCompressJobWritesTheEncodedPart(t *testing.T) {
	dir := t.TempDir()
	p := validPlan(dir)
	p.Size = 1<<20 + 3
	j, err := p.NewJob(1)
	require.NoError(t, err)
	defer j.Close()
	require.NoError(t, j.Prepare(context.Background()))
	res, err := j.Run(context.Background())
	require.NoError(t, err)

	out, err := os.ReadFile(j.SinkName())
	require.NoError(t, err)
	assert.Equal(t, res.BytesOut, int64(len(out)), "BytesOut is what reached the file")
	off, size := j.Part()
	assert.Equal(t, generated(t, int(size), off, p.Seed, p.Ratio), decode(t, p.Codec, out),
		"the file decodes to thread 1's part of the virtual file")
}

func TestDecompressJobWritesThePart(t *testing.T) {
	p := validPlan(t.TempDir())
	p.Operation, p.Codec = Decompress, lz4Codec
	j, err := p.NewJob(1)
	require.NoError(t, err)
	defer j.Close()
	require.NoError(t, j.Prepare(context.Background()))
	res, err := j.Run(context.Background())
	require.NoError(t, err)

	out, err := os.ReadFile(j.SinkName())
	require.NoError(t, err)
	off, size := j.Part()
	assert.Equal(t, size, res.BytesOut)
	assert.Equal(t, generated(t, int(size), off, p.Seed, p.Ratio), out)
	assert.Less(t, res.BytesIn, size, "the input was compressed")
}

func flipByte(t *testing.T, path string, at float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotEmpty(t, b)
	b[int(float64(len(b))*at)] ^= 0x20
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func TestVerifyCatchesCorruptedOutput(t *testing.T) {
	for _, op := range []string{Compress, Decompress} {
		for _, codec := range Codecs() {
			t.Run(op+" "+codec, func(t *testing.T) {
				p := validPlan(t.TempDir())
				p.Operation, p.Codec = op, codec
				ctx := context.Background()
				j, err := p.NewJob(0)
				require.NoError(t, err)
				defer j.Close()
				require.NoError(t, j.Prepare(ctx))
				_, err = j.Run(ctx)
				require.NoError(t, err)
				require.NoError(t, j.Verify(ctx), "untouched output verifies")

				flipByte(t, j.SinkName(), 0.6)
				err = j.Verify(ctx)
				require.Error(t, err)
				assert.ErrorIs(t, err, errMismatch)
				assert.Contains(t, err.Error(), j.SinkName())
			})
		}
	}
}

func TestVerifyNamesBothChecksums(t *testing.T) {
	p := validPlan(t.TempDir())
	p.Operation = Decompress
	ctx := context.Background()
	j, err := p.NewJob(0)
	require.NoError(t, err)
	defer j.Close()
	require.NoError(t, j.Prepare(ctx))
	_, err = j.Run(ctx)
	require.NoError(t, err)
	flipByte(t, j.SinkName(), 0.5)
	err = j.Verify(ctx)
	require.Error(t, err)
	assert.Regexp(t, regexp.MustCompile(`CRC-32C [0-9a-f]{8}.*CRC-32C [0-9a-f]{8}`), err.Error())
}

func TestRunStopsWhenCancelled(t *testing.T) {
	for _, op := range []string{Compress, Decompress} {
		t.Run(op, func(t *testing.T) {
			p := validPlan(t.TempDir())
			p.Operation, p.Size, p.Threads = op, 8<<20, 1
			j, err := p.NewJob(0)
			require.NoError(t, err)
			defer j.Close()
			require.NoError(t, j.Prepare(context.Background()))

			ctx, cancel := context.WithCancel(context.Background())
			var done int64
			j.Progress = func(n int64) {
				done += n
				cancel() // after the first chunk
			}
			_, err = j.Run(ctx)
			assert.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, int64(runChunk), done, "stops after the chunk in which it was cancelled")
		})
	}
}

func TestPrepareStopsWhenCancelled(t *testing.T) {
	j, err := validPlan(t.TempDir()).NewJob(0)
	require.NoError(t, err)
	defer j.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, j.Prepare(ctx), context.Canceled)
}

func TestJobCallsOutOfOrder(t *testing.T) {
	ctx := context.Background()
	j, err := validPlan(t.TempDir()).NewJob(0)
	require.NoError(t, err)
	defer j.Close()
	_, err = j.Run(ctx)
	assert.ErrorContains(t, err, "call Prepare before Run")
	require.NoError(t, j.Prepare(ctx))
	assert.ErrorContains(t, j.Verify(ctx), "call Run before Verify")
	assert.ErrorContains(t, j.Prepare(ctx), "already prepared")
	_, err = j.Run(ctx)
	require.NoError(t, err)
	_, err = j.Run(ctx)
	assert.ErrorContains(t, err, "already ran")
	require.NoError(t, j.Close())
	assert.NoError(t, j.Close(), "Close twice is fine")
}

func TestCloseBeforeRunReleasesAndRemoves(t *testing.T) {
	dir := t.TempDir()
	j, err := validPlan(dir).NewJob(0)
	require.NoError(t, err)
	require.NoError(t, j.Prepare(context.Background()))
	require.FileExists(t, j.SinkName())
	require.NoError(t, j.Close())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestCompressJobIntoFullDisk(t *testing.T) {
	const fsSize = 256 << 10
	dir := mountTmpfs(t, fsSize, false)
	p := validPlan(dir)
	p.Ratio, p.Size, p.Threads = 1, 1<<20, 1 // incompressible: 1 MiB will not fit
	j, err := p.NewJob(0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	require.NoError(t, j.Prepare(context.Background()))
	res, err := j.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), j.SinkName())
	m := regexp.MustCompile(`full after (\d+) bytes written`).FindStringSubmatch(err.Error())
	require.NotNil(t, m, "error names the byte count: %v", err)
	n, perr := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, perr)
	assert.Positive(t, n)
	assert.LessOrEqual(t, n, int64(fsSize))
	assert.Equal(t, n, res.BytesOut)
	assert.True(t, errors.Is(j.Verify(context.Background()), errMismatch), "a cut-off output does not verify")
}
