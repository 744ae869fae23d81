package catalog

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryWorkloadIsDescribed(t *testing.T) {
	require.Len(t, All(), 7)
	for _, w := range All() {
		t.Run(w.Name, func(t *testing.T) {
			assert.NotEmpty(t, w.Unit)
			assert.NotEmpty(t, w.About)
			assert.Contains(t, []Kind{KindCompute, KindCompression, KindProcs}, w.Kind)
			if w.TakesLoops() {
				assert.Positive(t, w.QuickLoops)
				assert.Less(t, w.QuickLoops, w.DefaultLoops, "--quick shrinks")
				assert.LessOrEqual(t, w.DefaultLoops, uint64(MaxLoops))
			} else {
				assert.Zero(t, w.DefaultLoops, "compression is sized in bytes")
				assert.True(t, IsCompression(w.Name))
			}
		})
	}
	assert.Less(t, QuickSize, DefaultSize)
	assert.LessOrEqual(t, DefaultSize, MaxDataBytes)
	assert.True(t, Lookup(Pi).LoopsInTotal)
	n, what := Lookup(Procs).MaxCount()
	assert.Equal(t, MaxProcs, n)
	assert.Equal(t, "processes", what)
}

func TestUnknownNamesSayWhatIsAllowed(t *testing.T) {
	_, err := Get("fft")
	assert.EqualError(t, err, `unknown workload "fft": allowed compress, decompress, fp, int, mmul, pi, procs`)
	assert.Equal(t, Workload{}, Lookup("fft"))
	assert.False(t, IsCompression("fft"))
	assert.EqualError(t, CheckLevel("rar", 0), `unknown codec "rar": allowed gzip, lz4, lzfse, zstd`)
	assert.EqualError(t, CheckLevel(Zstd, 23), "zstd level 23: allowed 1..22, or 0 for the default (3)")
	assert.EqualError(t, CheckLevel(LZFSE, 2), "lzfse level 2: lzfse has no levels, use 0")
	assert.NoError(t, CheckLevel(Gzip, 9))
	assert.Error(t, CheckRatio(0.5))
	assert.NoError(t, CheckRatio(DefaultRatio))
}

func TestCodecsPerOS(t *testing.T) {
	assert.Equal(t, []string{Zstd, Gzip, LZ4}, Codecs("linux"))
	assert.Equal(t, []string{Zstd, Gzip, LZ4, LZFSE}, Codecs("darwin"))
	assert.Equal(t, []string{SinkFile, SinkBlock, SinkNull}, Sinks())
}

// The catalogue is a leaf: every layer imports it, so it imports nothing of
// this module but units, a leaf itself, which writes and reads the
// parameters' counts and sizes.
func TestIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/qoslab/qoslab/") {
			assert.Contains(t, []string{"github.com/qoslab/qoslab/internal/workload/catalog", "github.com/qoslab/qoslab/internal/units"}, dep)
		}
	}
}

func TestParseListAndMaxCount(t *testing.T) {
	got, err := ParseList(" fp,int ,fp")
	require.NoError(t, err)
	assert.Equal(t, []string{FP, Int}, got, "each once, in order")
	_, err = ParseList("fp,fft")
	assert.EqualError(t, err, `unknown workload "fft": allowed compress, decompress, fp, int, mmul, pi, procs`)
	assert.Equal(t, MaxThreads, MaxCountOf([]string{FP, Pi}))
	assert.Equal(t, MaxProcs, MaxCountOf([]string{Procs, FP}), "the strictest limit, whatever the order")
	assert.Equal(t, MaxProcs, MaxCountOf([]string{FP, Procs}))
}
