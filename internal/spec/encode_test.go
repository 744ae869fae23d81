package spec

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/qos"
)

// TestEncodeReadsBack: every built-in spec, and specs setting what the
// built-in ones leave out, written by Encode and read by ParseSpec, is the
// same Spec.
func TestEncodeReadsBack(t *testing.T) {
	var specs []Spec
	for _, name := range DefaultSpecNames() {
		s, err := DefaultSpec(name)
		require.NoError(t, err)
		specs = append(specs, s)
	}
	seed := uint64(1<<64 - 1)
	full, err := ParseSpec([]byte(`
name: full
description: "every key: set, quoted: yes"
targets: vm
vm: {backend: qemu, image: mine, cpus: 2, memory: 3GiB, disk: 100000001, accel: tcg, host_qos: utility}
matrix:
  - {workload: fp, qos: [33, 9], threads: 1-3, duration: 1500ms}
  - {workload: int, loops: 2e8}
  - {workload: compress, size: 1MiB, ratio: 2.5, codec: zstd, level: 3, sink: file, sink_path: /tmp/x}
repeats: 4
max_repeats: 0
warmup: 2
order: sequential
contention: all
telemetry_ms: 0
data_seed: 7
verdict: {relative_margin: 0.25, absolute_margin: 1.5}
cell_timeout: 90s
`), "full")
	require.NoError(t, err)
	full.Seed = &seed
	specs = append(specs, full)
	for _, s := range specs {
		t.Run(s.Name, func(t *testing.T) {
			b, err := Encode(s)
			require.NoError(t, err)
			got, err := ParseSpec(b, "encoded")
			require.NoError(t, err, "%s", b)
			assert.Equal(t, s, got, "%s", b)
		})
	}
	assert.Equal(t, contention.All, full.Contention)
	assert.Equal(t, qos.Utility, full.VM.HostQoS)
	assert.Equal(t, 90*time.Second, full.CellTimeout)
}

// TestEncodeWritesTheSpecsUnits: the keys a spec file has, not the JSON
// field names run.json records (duration_ns was refused fed back).
func TestEncodeWritesTheSpecsUnits(t *testing.T) {
	s, err := DefaultSpec("contention")
	require.NoError(t, err)
	b, err := Encode(s)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "_ns")
	assert.NotContains(t, string(b), "size_bytes")
	path := filepath.Join(t.TempDir(), "again.yaml")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	got, err := LoadSpec(path)
	require.NoError(t, err)
	assert.Equal(t, s, got)
}
