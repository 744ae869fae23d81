package experiment

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Every loop workload calibrates to a rate; compression, whose time a loop
// does not tell, is refused, naming the workloads that calibrate.
func TestCalibrateHost(t *testing.T) {
	for _, w := range []string{catalog.FP, catalog.Int, catalog.MMul, catalog.Pi, catalog.Procs} {
		rate, took, err := CalibrateHost(w)
		require.NoError(t, err, w)
		assert.Positive(t, rate, w)
		assert.Positive(t, took, w)
	}
	_, _, err := CalibrateHost(catalog.Compress)
	assert.EqualError(t, err, "compress is not calibrated: only loop workloads are (fp, int, mmul, pi, procs)")
}

// A thread's work is its loops, pi's share of them, or its share of the
// size; the work a cell was asked to do is left out of the key its rate
// is matched by, and nothing else is.
func TestThreadWorkAndWorkKey(t *testing.T) {
	fp := PlannedRun{Workload: catalog.FP, Threads: 4, Params: catalog.Params{Loops: 1e8}}
	pi := PlannedRun{Workload: catalog.Pi, Threads: 4, Params: catalog.Params{Loops: 1e8}}
	zstd := PlannedRun{Workload: catalog.Compress, Threads: 2, Params: catalog.Params{SizeBytes: 1 << 20, Codec: "zstd", Ratio: 3, Sink: "file", SinkPath: "/x"}}
	assert.InDelta(t, 1e8, threadWork(fp), 0)
	assert.InDelta(t, 2.5e7, threadWork(pi), 0)
	assert.InDelta(t, 1<<19, threadWork(zstd), 0)

	other := fp
	other.Loops, other.Duration = 0, 1e9
	assert.Equal(t, workKey(fp.Series()), workKey(other.Series()), "loops or a duration: the same rate")
	other.QoS = 9
	assert.NotEqual(t, workKey(fp.Series()), workKey(other.Series()), "another class")
	gzip := zstd
	gzip.Codec, gzip.SizeBytes, gzip.SinkPath = "gzip", 4<<20, ""
	assert.NotEqual(t, workKey(zstd.Series()), workKey(gzip.Series()), "another codec")
	gzip.Codec = "zstd"
	assert.Equal(t, workKey(zstd.Series()), workKey(gzip.Series()), "another size or sink path")
}
