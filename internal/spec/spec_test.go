package spec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

var bothClasses = []qos.Class{qos.Background, qos.UserInteractive}

// The default spec is the design of [game] (docs/references.md), exactly as
// the issue words it.
func TestDefaultSpecSubsumption(t *testing.T) {
	assert.Equal(t, []string{"allocation", "batches", "contention", "pi", "subsumption"}, DefaultSpecNames())
	s, err := DefaultSpec("subsumption")
	require.NoError(t, err)
	assert.Contains(t, s.Description, "Can you game core allocation on Apple silicon?", "it cites the article by title")
	s.Description = ""
	want := Spec{
		Name:    "subsumption",
		Targets: []string{TargetHost, TargetVM},
		VM:      VMSpec{CPUs: 4},
		Matrix: []MatrixEntry{
			{Workload: "fp", QoS: bothClasses, Threads: []int{1, 2, 3, 4}, Params: catalog.Params{Loops: 2e8}},
			{Workload: "compress", QoS: bothClasses, Threads: []int{1}, Params: catalog.Params{SizeBytes: 1 << 30, Ratio: 3, Codec: "zstd", Sink: "file"}},
			{Workload: "decompress", QoS: bothClasses, Threads: []int{1}, Params: catalog.Params{SizeBytes: 1 << 30, Ratio: 3, Codec: "zstd", Sink: "file"}},
		},
		Repeats: 6, MaxRepeats: 18,
		Order: OrderInterleaved, TelemetryMs: 100, DataSeed: 1, Verdict: analysis.DefaultMargins(),
	}
	assert.Equal(t, want, s)

	src, err := DefaultSpecSource("subsumption")
	require.NoError(t, err)
	assert.Contains(t, string(src), "4.8e7 loops/s", "the default documents where its numbers come from")
}

func TestDefaultSpecUnknown(t *testing.T) {
	for _, name := range []string{"nope", "../spec", ""} {
		_, err := DefaultSpec(name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), `allowed allocation, batches, contention, pi, subsumption`, name)
	}
}

// A spec that gives only a matrix gets every default, and says so in its
// values.
func TestParseSpecDefaults(t *testing.T) {
	s, err := ParseSpec([]byte("matrix:\n  - workload: fp\n  - workload: pi\n  - workload: decompress\n"), "mine")
	require.NoError(t, err)
	assert.Equal(t, Spec{
		Name:    "mine",
		Targets: []string{TargetHost, TargetVM},
		VM:      VMSpec{CPUs: defaultVMCPUs},
		Matrix: []MatrixEntry{
			{Workload: "fp", QoS: bothClasses, Threads: []int{1}, Params: catalog.Params{Loops: 2e8}},
			{Workload: "pi", QoS: bothClasses, Threads: []int{1}, Params: catalog.Params{Loops: 1e8}},
			{Workload: "decompress", QoS: bothClasses, Threads: []int{1}, Params: catalog.Params{SizeBytes: catalog.DefaultSize, Ratio: 3, Codec: "zstd", Sink: "file"}},
		},
		Repeats: DefaultRepeats, MaxRepeats: DefaultMaxRepeatsFactor * DefaultRepeats,
		Warmup: DefaultWarmup,
		Order:  OrderInterleaved, TelemetryMs: 100, DataSeed: 1, Verdict: analysis.DefaultMargins(),
	}, s)
	assert.Nil(t, s.Seed, "no seed given: the plan picks one")
}

func TestParseSpecEverySetting(t *testing.T) {
	yml := `
name: full-1.0
description: every key
targets: vm
vm:
  backend: qemu
  image: linux
  cpus: 2
  memory: 3GiB
  disk: 2GiB
  accel: tcg
  model: vz
  host_qos: utility
matrix:
  - workload: procs
    qos: default
    threads: 10-70/20
    loops: 1.5e6
  - workload: compress
    qos: [9, "user-interactive"]
    threads: [1, "3-4"]
    size: 64MiB
    ratio: 2.5
    codec: gzip
    level: 9
    sink: block
    sink_path: /dev/vdb
repeats: 5
max_repeats: 20
warmup: 2
order: sequential
seed: 18446744073709551615
contention: 2
telemetry_ms: 250
data_seed: 42
verdict:
  relative_margin: 0.2
  absolute_margin: 1.5
cell_timeout: 10m
`
	s, err := ParseSpec([]byte(yml), "ignored")
	require.NoError(t, err)
	require.NotNil(t, s.Seed)
	assert.Equal(t, uint64(18446744073709551615), *s.Seed)
	s.Seed = nil
	assert.Equal(t, Spec{
		Name: "full-1.0", Description: "every key",
		Targets: []string{TargetVM},
		VM:      VMSpec{Backend: "qemu", Image: "linux", CPUs: 2, MemoryBytes: 3 << 30, DiskBytes: 2 << 30, Accel: "tcg", Model: "vz", HostQoS: qos.Utility},
		Matrix: []MatrixEntry{
			{Workload: "procs", QoS: []qos.Class{qos.Default}, Threads: []int{10, 30, 50, 70}, Params: catalog.Params{Loops: 1500000}},
			{Workload: "compress", QoS: bothClasses, Threads: []int{1, 3, 4}, Params: catalog.Params{SizeBytes: 64 << 20, Ratio: 2.5, Codec: "gzip", Level: 9, Sink: "block", SinkPath: "/dev/vdb"}},
		},
		Repeats: 5, MaxRepeats: 20, Warmup: 2, Order: OrderSequential, Contention: 2, TelemetryMs: 250, DataSeed: 42,
		Verdict: analysis.Margins{Relative: 0.2, Absolute: 1.5}, CellTimeout: 10 * time.Minute,
	}, s)
}

// Lists, counts and sizes are accepted in the spellings people write.
func TestParseSpecSpellings(t *testing.T) {
	tests := []struct {
		entry   string
		threads []int
		classes []qos.Class
		loops   uint64
	}{
		{"{workload: fp, threads: 4}", []int{4}, bothClasses, 2e8},
		{"{workload: fp, threads: '1-4'}", []int{1, 2, 3, 4}, bothClasses, 2e8},
		{"{workload: fp, threads: '1,2,4'}", []int{1, 2, 4}, bothClasses, 2e8},
		{"{workload: fp, threads: [1, 2, 2, '3-4']}", []int{1, 2, 3, 4}, bothClasses, 2e8},
		{"{workload: fp, qos: '9,33,9'}", []int{1}, bothClasses, 2e8},
		{"{workload: fp, qos: [userInteractive, 9]}", []int{1}, []qos.Class{qos.UserInteractive, qos.Background}, 2e8},
		{"{workload: fp, qos: 17}", []int{1}, []qos.Class{qos.Utility}, 2e8},
		{"{workload: fp, loops: 2e8}", []int{1}, bothClasses, 2e8},
		{"{workload: fp, loops: '1.5e9'}", []int{1}, bothClasses, 1.5e9},
		{"{workload: fp, loops: 200_000_000}", []int{1}, bothClasses, 2e8},
		{"{workload: fp, loops: 12345}", []int{1}, bothClasses, 12345},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			s, err := ParseSpec([]byte("matrix: ["+tt.entry+"]"), "t")
			require.NoError(t, err)
			e := s.Matrix[0]
			assert.Equal(t, tt.threads, e.Threads)
			assert.Equal(t, tt.classes, e.QoS)
			assert.Equal(t, tt.loops, e.Loops)
		})
	}
	for spelling, want := range map[string]int64{"1GiB": 1 << 30, "512MiB": 512 << 20, "1e9": 1e9, "1.5GB": 1.5e9, "4096": 4096} {
		s, err := ParseSpec([]byte("matrix: [{workload: compress, size: "+spelling+"}]"), "t")
		require.NoError(t, err, spelling)
		assert.Equal(t, want, s.Matrix[0].SizeBytes, spelling)
	}
}

// Anchors and merge keys let entries share settings.
func TestParseSpecMergeKeys(t *testing.T) {
	yml := `
matrix:
  - &compress {workload: compress, qos: 33, size: 8MiB, codec: lz4}
  - <<: *compress
    workload: decompress
`
	s, err := ParseSpec([]byte(yml), "t")
	require.NoError(t, err)
	require.Len(t, s.Matrix, 2)
	assert.Equal(t, "decompress", s.Matrix[1].Workload, "a mapping's own key overrides the merged one")
	assert.Equal(t, "lz4", s.Matrix[1].Codec)
	assert.Equal(t, int64(8<<20), s.Matrix[1].SizeBytes)
	assert.Equal(t, []qos.Class{qos.UserInteractive}, s.Matrix[1].QoS)
}

func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	require.Error(t, err)
	var se *specError
	require.True(t, errors.As(err, &se), "want a *specError, got %T: %v", err, err)
	return se.Problems
}

// Unknown keys at every level are errors naming each, with its path, what
// is allowed there, and the likely intended key.
func TestParseSpecUnknownKeys(t *testing.T) {
	yml := `
name: typos
Repeats: 3
vm:
  cpu: 2
matrix:
  - workload: fp
  - workload: fp
    treads: 1-4
    qos: 9
    colour: blue
`
	_, err := ParseSpec([]byte(yml), "typos")
	p := problemsOf(t, err)
	require.Len(t, p, 4, "%q", p)
	assert.Equal(t, "Repeats (line 3): unknown key: allowed name, description, targets, vm, matrix, repeats, max_repeats, warmup, order, seed, contention, telemetry_ms, data_seed, verdict, cell_timeout; did you mean repeats?", p[0])
	assert.Equal(t, "vm.cpu (line 5): unknown key: allowed backend, image, cpus, memory, disk, accel, model, host_qos; did you mean cpus?", p[1])
	var params []string // the parameters' keys, as declared (catalog.ParamKeys)
	for _, k := range catalog.ParamKeys() {
		params = append(params, k.Name)
	}
	assert.Equal(t, []string{"loops", "duration", "size", "ratio", "codec", "level", "sink", "sink_path"}, params[:8])
	assert.Equal(t, "matrix[1].treads (line 9): unknown key: allowed workload, qos, threads, "+strings.Join(params, ", ")+"; did you mean threads?", p[2])
	assert.True(t, strings.HasPrefix(p[3], "matrix[1].colour (line 11): unknown key: allowed workload,"), p[3])
	assert.NotContains(t, p[3], "did you mean", "nothing is close to colour")
	assert.Contains(t, err.Error(), "spec typos has 4 problems:\n  Repeats (line 3)")
}

func TestParseSpecErrors(t *testing.T) {
	const fp = "matrix: [{workload: fp}]\n"
	tests := []struct {
		name string
		yml  string
		want string
	}{
		{"empty file", "", "empty: a spec needs at least a matrix"},
		{"only comments", "# nothing\n", "empty: a spec needs at least a matrix"},
		{"not YAML", "matrix: [", "not valid YAML"},
		{"two documents", fp + "---\n" + fp, "a second YAML document starts near line 2: one spec per file"},
		{"not a mapping", "- fp\n", "the spec (line 1): want a mapping of keys (name, description,"},
		{"key twice", fp + "repeats: 2\nrepeats: 3\n", "repeats (line 3): given twice (first on line 2)"},
		{"no matrix", "repeats: 3\n", "matrix is empty: add at least one entry"},
		{"empty matrix", "matrix: []\n", "matrix is empty"},
		{"matrix not a list", "matrix: {workload: fp}\n", "matrix (line 1): want a list of entries"},
		{"repeats 0", fp + "repeats: 0\n", "repeats 0: allowed 1..1000"},
		{"repeats not a number", fp + "repeats: three\n", `repeats (line 2): "three" is not a whole number`},
		{"repeats a list", fp + "repeats: [3]\n", "repeats (line 2): want a whole number, got a list"},
		{"max_repeats below repeats", fp + "repeats: 6\nmax_repeats: 4\n", "max_repeats 4: allowed 0 (add no repeats) or 6..1000 (at least the spec's repeats, 6)"},
		{"max_repeats negative", fp + "max_repeats: -1\n", "max_repeats -1: allowed 0 (add no repeats) or 6..1000"},
		{"max_repeats too many", fp + "max_repeats: 1001\n", "max_repeats 1001: allowed 0 (add no repeats) or 6..1000"},
		{"warmup negative", fp + "warmup: -1\n", "warmup -1: allowed 0..100"},
		{"unknown target", fp + "targets: [host, cloud]\n", `targets[1] "cloud": allowed host, vm`},
		{"empty targets", fp + "targets: []\n", "targets is empty: allowed host, vm"},
		{"unknown order", fp + "order: random\n", `order "random": allowed interleaved`},
		{"bad seed", fp + "seed: -1\n", `seed (line 2): "-1": allowed a whole number 0..18446744073709551615, or leave it out`},
		{"contention", fp + "contention: 300\n", `contention (line 2): "300": allowed 0..256 spinner threads or all (one per CPU)`},
		{"contention negative", fp + "contention: -1\n", `contention (line 2): "-1": allowed 0..256 spinner threads or all`},
		{"contention word", fp + "contention: some\n", `contention (line 2): "some": allowed 0..256 spinner threads or all`},
		{"contention list", fp + "contention: [all]\n", "contention (line 2): want a whole number or all, got a list"},
		{"telemetry interval", fp + "telemetry_ms: 5\n", "telemetry_ms 5: allowed 0 (no telemetry) or 10..10000 ms between samples"},
		{"bad name", fp + "name: my spec\n", `name "my spec": allowed up to 64 letters, digits`},
		{"vm backend", fp + "vm: {backend: xen}\n", `vm.backend "xen": allowed qemu, vz`},
		{"vm cpus", fp + "vm: {cpus: 0}\n", "vm.cpus 0: allowed 1..256"},
		{"vm memory", fp + "vm: {memory: 64MiB}\n", "vm.memory 64MiB: allowed 128MiB..1TiB"},
		{"vm memory unparsable", fp + "vm: {memory: lots}\n", `vm.memory (line 2): "lots" is not a size`},
		{"vm accel", fp + "vm: {accel: whpx}\n", `vm.accel "whpx": allowed kvm, tcg, hvf`},
		{"vm accel with vz", fp + "vm: {accel: kvm, backend: vz}\n", `vm.accel "kvm": only the qemu`}, // the rest is the registry's, pinned there
		{"vm model", fp + "vm: {model: vmware}\n", `vm.model "vmware": allowed default, vz`},          // the rest is the registry's, pinned there
		{"vm model vz with the vz backend", fp + "vm: {model: vz, backend: vz}\n", `vm.model "vz" with vm.backend vz: the vz model is the qemu backend's emulation`},
		{"vm host_qos", fp + "vm: {host_qos: 10}\n", `vm.host_qos (line 2): unknown QoS class "10": allowed background|9`},
		{"vm too small for compression", "matrix: [{workload: compress, size: 1GiB}]\nvm: {memory: 1GiB}\n",
			"vm.memory 1GiB is too small for compression of 1GiB: give at least 2560MiB"},
		{"no workload", "matrix: [{qos: 9}]\n", "matrix[0] (line 1): no workload: allowed compress, decompress, fp, int, mmul, pi, procs"},
		{"unknown workload", "matrix: [{workload: fft}]\n", `matrix[0].workload (line 1): unknown workload "fft": allowed compress`},
		{"two workloads", "matrix: [{workload: [fp, int]}]\n", "matrix[0].workload (line 1): one workload per entry"},
		{"bad class", "matrix: [{workload: fp, qos: [9, 40]}]\n", `matrix[0].qos (line 1): unknown QoS class "40": allowed background|9`},
		{"empty class", "matrix: [{workload: fp, qos: '9,,33'}]\n", "matrix[0].qos (line 1): has an empty item"},
		{"no classes", "matrix: [{workload: fp, qos: []}]\n", "matrix[0].qos is empty"},
		{"threads 0", "matrix: [{workload: fp, threads: 0}]\n", `matrix[0].threads (line 1): counts "0": "0" is outside 1..1024`},
		{"threads range out", "matrix: [{workload: fp, threads: 1-2000}]\n", `"1-2000" is outside 1..1024`},
		{"threads backwards", "matrix: [{workload: fp, threads: 4-1}]\n", `range "4-1" runs backwards; write 1-4`},
		{"procs too many", "matrix: [{workload: procs, threads: 300}]\n", "matrix[0].threads[0] 300: procs allows 1..256 processes"},
		{"loops 0", "matrix: [{workload: fp, loops: 0}]\n", "matrix[0].loops (line 1): \"0\": allowed 1..1125899906842624"},
		{"loops fraction", "matrix: [{workload: fp, loops: 2.5}]\n", "\"2.5\" is not a whole number"},
		{"pi loops under threads", "matrix: [{workload: pi, loops: 2, threads: 4}]\n", "matrix[0].loops 2: pi's loops are iterations in total, allowed 4 (one per thread)"},
		{"size on fp", "matrix: [{workload: fp, size: 1GiB}]\n", "matrix[0].size (line 1): fp does not take size: its keys are workload, qos, threads, loops"},
		{"loops on compress", "matrix: [{workload: compress, loops: 5}]\n", "matrix[0].loops (line 1): compress does not take loops"},
		{"size 0", "matrix: [{workload: compress, size: 0}]\n", `matrix[0].size (line 1): "0": allowed 1 byte..64GiB`},
		{"size under threads", "matrix: [{workload: compress, size: 2, threads: 4}]\n", "matrix[0].size 2 bytes: allowed 4 (one per thread)"},
		{"ratio", "matrix: [{workload: compress, ratio: 0.5}]\n", "matrix[0].ratio: compression ratio 0.5: allowed 1 (random) .. 10"},
		{"codec", "matrix: [{workload: compress, codec: brotli}]\n", `matrix[0]: unknown codec "brotli": allowed gzip, lz4, lzfse, zstd`},
		{"level", "matrix: [{workload: compress, level: 30}]\n", "matrix[0]: zstd level 30: allowed 1..22"},
		{"sink", "matrix: [{workload: compress, sink: pipe}]\n", `matrix[0].sink "pipe": allowed file, block, null`},
		{"block sink without path", "matrix: [{workload: compress, sink: block}]\n", "matrix[0].sink block needs sink_path"},
		{"same cell twice", "matrix: [{workload: fp, threads: 1-2}, {workload: fp, threads: 2-3}]\n",
			`matrix[1] measures "fp qos=9 threads=2 loops=200000000" again, as matrix[0] does`},
		{"loops and duration", "matrix: [{workload: fp, loops: 1e6, duration: 1s}]\n", "matrix[0]: loops 1000000 and duration 1s: give one, not both"},
		{"duration too short", "matrix: [{workload: fp, duration: 1ms}]\n", "matrix[0].duration (line 1): duration 1ms: allowed 10ms..1h0m0s"},
		{"duration 0", "matrix: [{workload: fp, duration: 0}]\n", "matrix[0].duration (line 1): duration 0s: allowed 10ms..1h0m0s"},
		{"duration not a duration", "matrix: [{workload: fp, duration: 2}]\n", `matrix[0].duration (line 1): "2" is not a duration: write it as 1s, 500ms or 2m`},
		{"duration on pi", "matrix: [{workload: pi, duration: 1s}]\n", "matrix[0].duration (line 1): pi does not take duration: its keys are workload, qos, threads, loops"},
		{"duration on compress", "matrix: [{workload: compress, duration: 1s}]\n", "matrix[0].duration (line 1): compress does not take duration"},
		{"entry not a mapping", "matrix: [fp]\n", `matrix[0] (line 1): want a mapping of keys (workload, qos,`},
		{"relative margin 1", fp + "verdict: {relative_margin: 1}\n", "verdict.relative_margin 1: allowed a share of the host's effect above 0 and below 1, such as 0.1 (10%)"},
		{"relative margin negative", fp + "verdict: {relative_margin: -0.1}\n", "verdict.relative_margin -0.1: allowed a share"},
		{"absolute margin 1", fp + "verdict: {absolute_margin: 1}\n", "verdict.absolute_margin 1: allowed a ratio above 1 and at most 10, such as 1.25"},
		{"absolute margin a percentage", fp + "verdict: {absolute_margin: 25%}\n", `verdict.absolute_margin (line 2): "25%" is not a number`},
		{"verdict unknown key", fp + "verdict: {margin: 1.2}\n", "verdict.margin (line 2): unknown key: allowed relative_margin, absolute_margin"},
		{"cell timeout short", fp + "cell_timeout: 10ms\n", "cell_timeout 10ms: allowed 1s..24h0m0s, or leave it out for no limit"},
		{"cell timeout number", fp + "cell_timeout: 600\n", `cell_timeout (line 2): "600" is not a duration: write it as 90s, 10m or 1h`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tt.yml), "t")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// Different entries measuring different things are not duplicates, even
// with the same workload, class and threads.
func TestParseSpecSameWorkloadDifferentParams(t *testing.T) {
	_, err := ParseSpec([]byte("matrix: [{workload: compress, size: 8MiB}, {workload: compress, size: 16MiB}]"), "t")
	assert.NoError(t, err)
}

// Validate reports every problem of a spec built in code, and fills nothing.
func TestValidateZeroSpec(t *testing.T) {
	p := problemsOf(t, Spec{}.Validate())
	joined := strings.Join(p, "\n")
	for _, want := range []string{`name ""`, "targets is empty", "vm.cpus 0", "matrix is empty", "repeats 0", `order ""`} {
		assert.Contains(t, joined, want)
	}
	p = problemsOf(t, Spec{Name: "x", Targets: []string{"host", "host"}, VM: VMSpec{CPUs: 1}, Repeats: 1, Order: OrderSequential,
		Matrix: []MatrixEntry{{Workload: "fp", QoS: []qos.Class{qos.Background}, Threads: []int{1}}}}.Validate())
	assert.Equal(t, []string{`targets[1] "host" is listed twice`, "matrix[0].loops 0: allowed 1..1125899906842624 per thread"}, p)
}

func TestLoadSpec(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fp-only.yaml")
	require.NoError(t, os.WriteFile(path, []byte("matrix: [{workload: fp, threads: 1-2}]\n"), 0o644))
	s, err := LoadSpec(path)
	require.NoError(t, err)
	assert.Equal(t, "fp-only", s.Name, "the file's base name names a spec that sets none")
	assert.Equal(t, []int{1, 2}, s.Matrix[0].Threads)

	_, err = LoadSpec(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.yaml")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("matrix: []\n"), 0o644))
	_, err = LoadSpec(bad)
	require.Error(t, err)
	assert.Equal(t, "spec bad: matrix is empty: add at least one entry, e.g. {workload: fp, qos: [9, 33], threads: 1-4}", err.Error())
}

func TestParseCounts(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{"4", []int{4}, ""},
		{" 1 - 4 ", []int{1, 2, 3, 4}, ""},
		{"1,2,4", []int{1, 2, 4}, ""},
		{"4,1-2,2", []int{4, 1, 2}, ""},
		{"10-70/10", []int{10, 20, 30, 40, 50, 60, 70}, ""},
		{"10-65/20", []int{10, 30, 50}, ""},
		{"", nil, "empty counts list"},
		{"80", []int{80}, ""},
		{"0", nil, `"0" is outside 1..80`},
		{"81", nil, `"81" is outside 1..80`},
		{"2-90", nil, `"2-90" is outside 1..80`},
		{"x", nil, `"x" is not a whole number`},
		{"1-x", nil, `"1-x" is not a range`},
		{"3-1", nil, "runs backwards; write 1-3"},
		{"1,,2", nil, `"" is not a whole number`},
		{"4/2", nil, "a step follows a range"},
		{"1-4/0", nil, "has a bad step"},
	}
	for _, tt := range tests {
		got, err := parseCounts(tt.in, 80)
		if tt.err != "" {
			require.Error(t, err, tt.in)
			assert.Contains(t, err.Error(), tt.err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

func TestQuick(t *testing.T) {
	full, err := DefaultSpec("subsumption")
	require.NoError(t, err)
	q := Shrink(full)
	assert.True(t, q.Quick)
	assert.False(t, full.Quick, "Shrink returns a copy")
	assert.Equal(t, uint64(2e8), full.Matrix[0].Loops, "the original keeps its loops")
	assert.Equal(t, catalog.Lookup("fp").QuickLoops, q.Matrix[0].Loops)
	for _, e := range q.Matrix[1:] {
		assert.Equal(t, catalog.QuickSize, e.SizeBytes, e.Workload)
	}
	assert.Equal(t, full.Repeats, q.Repeats, "the run keeps its repeats and classes")
	assert.Equal(t, full.MaxRepeats, q.MaxRepeats, "and its cap of repeats, as it keeps its repeats")
	assert.Equal(t, full.Matrix[0].QoS, q.Matrix[0].QoS)
	assert.Equal(t, []int{1, 2, 4}, q.Matrix[0].Threads, "1-4 threads: the smallest, the one halfway and the largest, enough for a regression line")
	require.NoError(t, q.Validate())
	assert.Equal(t, q, Shrink(q), "shrinking twice changes nothing more")

	q.Matrix[0].Threads[0] = 99
	assert.Equal(t, 1, full.Matrix[0].Threads[0], "the copy shares no slices with the original")

	small, err := ParseSpec([]byte("matrix: [{workload: fp, loops: 1000}, {workload: compress, size: 1MiB}, {workload: pi, loops: 1e9, threads: 1-4}, {workload: mmul}]"), "t")
	require.NoError(t, err)
	qs := Shrink(small)
	assert.Equal(t, uint64(1000), qs.Matrix[0].Loops, "what is already small stays")
	assert.Equal(t, int64(1<<20), qs.Matrix[1].SizeBytes)
	assert.Equal(t, uint64(1e6), qs.Matrix[2].Loops)
	assert.Equal(t, []int{1, 2, 4}, qs.Matrix[2].Threads)
	assert.Equal(t, uint64(1e4), qs.Matrix[3].Loops)
	require.NoError(t, qs.Validate())

	procs, err := ParseSpec([]byte("matrix: [{workload: procs, threads: 10-70/10}]"), "t")
	require.NoError(t, err)
	assert.Equal(t, []int{10}, Shrink(procs).Matrix[0].Threads, "procs keeps its smallest count: every process costs its start")
}

// Every embedded spec parses and is named as its file is.
func TestDefaultSpecsValid(t *testing.T) {
	for _, name := range DefaultSpecNames() {
		s, err := DefaultSpec(name)
		require.NoError(t, err, name)
		assert.Equal(t, name, s.Name)
	}
}

// Every built-in spec, and a spec that leaves repeats out, runs 6 repeats:
// enough for a difference between two cells to reach p < 0.05 (3 against
// 3 never can: the rank test's smallest two-sided p is 0.1).
func TestDefaultRepeatsCanBeSignificant(t *testing.T) {
	assert.Equal(t, 6, DefaultRepeats)
	assert.Less(t, analysis.SmallestP([][2]int{{DefaultRepeats, DefaultRepeats}}), analysis.Alpha)
	assert.GreaterOrEqual(t, analysis.SmallestP([][2]int{{3, 3}}), analysis.Alpha, "the old default could not")
	for _, name := range DefaultSpecNames() {
		s, err := DefaultSpec(name)
		require.NoError(t, err, name)
		assert.Equal(t, DefaultRepeats, s.Repeats, name)
		assert.Equal(t, s.Repeats, Shrink(s).Repeats, name+": --quick keeps the repeats")
	}
	s, err := ParseSpec([]byte("matrix: [{workload: fp}]\n"), "t")
	require.NoError(t, err)
	assert.Equal(t, DefaultRepeats, s.Repeats)
}

// A spec recorded as JSON (run.json) reads back as the same spec, so a
// resumed run plans what the first one did.
func TestSpecJSONRoundTrip(t *testing.T) {
	s, err := ParseSpec([]byte("matrix: [{workload: fp, threads: 1-2}, {workload: compress, level: 3}]\nvm: {host_qos: 33, memory: 4GiB}\nseed: 77\n"), "rt")
	require.NoError(t, err)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var back Spec
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, s, back)
	require.NoError(t, back.Validate())
}

func TestDefaultSpecContention(t *testing.T) {
	s, err := DefaultSpec("contention")
	require.NoError(t, err)
	assert.Equal(t, []string{TargetHost, TargetVM}, s.Targets)
	assert.Equal(t, contention.All, s.Contention, "on a homogeneous Linux host QoS only shows under contention, on every CPU")
	assert.Equal(t, 2, s.VM.CPUs)
	require.Len(t, s.Matrix, 1)
	assert.Equal(t, "fp", s.Matrix[0].Workload)
	assert.Equal(t, []qos.Class{qos.Background, qos.UserInteractive}, s.Matrix[0].QoS)
	assert.Len(t, s.Matrix[0].Threads, 2)
	assert.Equal(t, DefaultRepeats, s.Repeats)
	assert.Equal(t, time.Second, s.Matrix[0].Duration, "cells long enough that placement cannot decide them")
}

// contention takes a number or all; run.json keeps what was asked, and a
// run.json written before "all" existed (a plain number) still loads.
func TestSpecContention(t *testing.T) {
	const fp = "matrix: [{workload: fp}]\n"
	for yml, want := range map[string]contention.SpinnerCount{"contention: all\n": contention.All, "contention: ALL\n": contention.All,
		"contention: 0\n": 0, "contention: 3\n": 3, "": 0} {
		s, err := ParseSpec([]byte(fp+yml), "t")
		require.NoError(t, err, yml)
		assert.Equal(t, want, s.Contention, yml)
	}

	s, err := ParseSpec([]byte(fp+"contention: all\n"), "t")
	require.NoError(t, err)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"contention":"all"`)
	var back Spec
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, contention.All, back.Contention)

	var old Spec
	require.NoError(t, json.Unmarshal([]byte(`{"contention": 2}`), &old))
	assert.Equal(t, contention.SpinnerCount(2), old.Contention)
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"contention": 999}`), &old), "contention 999: allowed 0..256 spinner threads or all")
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"contention": "most"}`), &old), `contention "most": allowed 0..256`)
}

// duration replaces loops: no default loops are filled in, the series
// key says duration, and Shrink caps it.
func TestSpecDuration(t *testing.T) {
	s, err := ParseSpec([]byte("matrix: [{workload: fp, qos: 9, duration: 1500ms}, {workload: int, qos: 9}]\n"), "t")
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, s.Matrix[0].Duration)
	assert.Zero(t, s.Matrix[0].Loops, "no default loops beside a duration")
	assert.NotZero(t, s.Matrix[1].Loops, "an entry without duration keeps its default loops")
	assert.Equal(t, "host fp qos=9 threads=1 duration=1.5s", s.Matrix[0].SeriesKey(TargetHost, 9, 1).String())
	assert.Equal(t, quickDuration, Shrink(s).Matrix[0].Duration)

	b, err := json.Marshal(s)
	require.NoError(t, err)
	var back Spec
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, s.Matrix[0].Duration, back.Matrix[0].Duration)
}

// A spec "file" that is a device or a huge file is refused at once.
func TestLoadSpecRefusesDevicesAndHugeFiles(t *testing.T) {
	_, err := LoadSpec("/dev/zero")
	assert.EqualError(t, err, "spec /dev/zero: not a regular file (a character device); give a YAML spec")
	big := filepath.Join(t.TempDir(), "big.yaml")
	require.NoError(t, os.WriteFile(big, make([]byte, 5<<20), 0o644))
	_, err = LoadSpec(big)
	assert.EqualError(t, err, "spec "+big+": 5MiB is over the 4MiB limit for a YAML spec")
}

// The seed experiments are built in, each with the numbers its article
// gives: [allocation] mmul at 33 on 1-8 threads, [m1-qos] 1e9 pi
// iterations on 1, 2, 4, 8, 10 threads, [processes] 10-70 processes of 1e8
// loops at 9 and 33; each has the host and a VM, and 6 repeats.
func TestDefaultSpecsOfTheSeedExperiments(t *testing.T) {
	assert.Equal(t, []string{"allocation", "batches", "contention", "pi", "subsumption"}, DefaultSpecNames())
	cases := []struct {
		name     string
		workload string
		qos      []qos.Class
		threads  []int
		loops    uint64
	}{
		{"allocation", "mmul", []qos.Class{qos.UserInteractive}, []int{1, 2, 3, 4, 5, 6, 7, 8}, 2e5},
		{"pi", "pi", []qos.Class{qos.UserInteractive}, []int{1, 2, 4, 8, 10}, 1e9},
		{"batches", "procs", []qos.Class{qos.Background, qos.UserInteractive}, []int{10, 20, 30, 40, 50, 60, 70}, 1e8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := DefaultSpec(c.name)
			require.NoError(t, err)
			assert.Equal(t, []string{TargetHost, TargetVM}, s.Targets)
			assert.Equal(t, DefaultRepeats, s.Repeats)
			require.Len(t, s.Matrix, 1)
			e := s.Matrix[0]
			assert.Equal(t, c.workload, e.Workload)
			assert.Equal(t, c.qos, e.QoS)
			assert.Equal(t, c.threads, e.Threads)
			assert.Equal(t, c.loops, e.Loops)
			src, err := DefaultSpecSource(c.name)
			require.NoError(t, err)
			assert.Contains(t, string(src), "docs/references.md", "cites its article")
			q := Shrink(s)
			assert.Less(t, q.Matrix[0].Loops, e.Loops, "--quick shrinks it")
		})
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets("--target", "vm, host,vm")
	require.NoError(t, err)
	assert.Equal(t, []string{TargetVM, TargetHost}, got)
	_, err = ParseTargets("QOSLAB_BENCH_TARGET", "hots")
	assert.EqualError(t, err, `QOSLAB_BENCH_TARGET "hots": allowed host, vm; did you mean host?`)
}

// A VM is sized for the compression it holds, unless the spec says.
func TestVMSize(t *testing.T) {
	s, err := DefaultSpec("subsumption")
	require.NoError(t, err)
	mem, disk := VMSize(s)
	assert.GreaterOrEqual(t, mem, 2*1024+512, "1 GiB of compression input is held in guest memory")
	assert.Greater(t, disk, int64(1<<30))

	s.VM.MemoryBytes, s.VM.DiskBytes = 8<<30, 16<<30
	mem, disk = VMSize(s)
	assert.Equal(t, 8192, mem, "the spec's vm.memory wins")
	assert.Equal(t, int64(16<<30), disk)

	fp, err := DefaultSpec("contention")
	require.NoError(t, err)
	mem, disk = VMSize(fp)
	assert.Equal(t, minVMMemoryMiB, mem, "no compression: the smallest VM")
	assert.Equal(t, minVMDiskBytes, disk)
}

// Every parameter the catalog lists is a key of a matrix entry, decoded
// into its field.
func TestEveryParamKeyDecodes(t *testing.T) {
	for _, pk := range catalog.ParamKeys() {
		t.Run(pk.Name, func(t *testing.T) {
			var p catalog.Params
			d := &specDecoder{}
			assert.NotPanics(t, func() { d.param(pk.Name, pk.Field(&p)) })
		})
	}
	s, err := ParseSpec([]byte("matrix:\n  - {workload: compress, size: 2MiB, ratio: 2, codec: gzip, level: 4, sink: \"null\", sink_path: /x}\n  - {workload: fp, duration: 2s}\n"), "keys")
	require.NoError(t, err)
	assert.Equal(t, catalog.Params{SizeBytes: 2 << 20, Ratio: 2, Codec: "gzip", Level: 4, Sink: "null", SinkPath: "/x"}, s.Matrix[0].Params)
	assert.Equal(t, catalog.Params{Duration: 2 * time.Second}, s.Matrix[1].Params)
}
