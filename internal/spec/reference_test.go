package spec

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateSpecDoc = flag.Bool("update-spec-doc", false, "rewrite docs/spec.md from keyDocs")

// allowedKeys asks the decoder which keys it allows where a spec has an
// unknown key: the decoder's own answer, not a copy of its lists.
func allowedKeys(t *testing.T, yml string) []string {
	t.Helper()
	_, err := ParseSpec([]byte(yml), "probe")
	require.Error(t, err)
	m := regexp.MustCompile(`unknown key: allowed ([a-z_, ]+)`).FindStringSubmatch(err.Error())
	require.NotNil(t, m, "%v", err)
	return strings.Split(m[1], ", ")
}

func TestSpecKeysAreTheDecodersKeys(t *testing.T) {
	want := map[string]bool{}
	for _, k := range allowedKeys(t, "zzz: 1\n") {
		want[k] = true
	}
	for _, k := range allowedKeys(t, "vm: {zzz: 1}\n") {
		want["vm."+k] = true
	}
	for _, k := range allowedKeys(t, "verdict: {zzz: 1}\n") {
		want["verdict."+k] = true
	}
	// An entry's keys depend on its workload's kind: both kinds together.
	for _, w := range []string{"fp", "compress"} {
		for _, k := range allowedKeys(t, "matrix: [{workload: "+w+", zzz: 1}]\n") {
			want["matrix[]."+k] = true
		}
	}
	var documented, decoded []string
	for _, k := range keyDocs() {
		documented = append(documented, k.Key)
		assert.NotEmpty(t, k.Type, k.Key)
		assert.NotEmpty(t, k.Doc, k.Key)
	}
	for k := range want {
		decoded = append(decoded, k)
	}
	sort.Strings(documented)
	sort.Strings(decoded)
	assert.Equal(t, decoded, documented, "every key the decoder takes is documented, and nothing else")
}

func TestSpecDocIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "spec.md")
	if *updateSpecDoc {
		require.NoError(t, os.WriteFile(path, []byte(reference()), 0o644))
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, reference(), string(b), "docs/spec.md is stale: go test ./internal/spec -run TestSpecDocIsCurrent -update-spec-doc")
}

// The documented defaults are what the decoder fills in.
func TestSpecDocDefaults(t *testing.T) {
	s, err := ParseSpec([]byte("matrix: [{workload: fp}, {workload: compress}]\n"), "d")
	require.NoError(t, err)
	doc := map[string]string{}
	for _, k := range keyDocs() {
		doc[k.Key] = k.Default
	}
	assert.Equal(t, "6", doc["repeats"])
	assert.Equal(t, DefaultRepeats, s.Repeats)
	assert.Equal(t, "3 times repeats", doc["max_repeats"])
	assert.Equal(t, 3*s.Repeats, s.MaxRepeats)
	zero, err := ParseSpec([]byte("matrix: [{workload: fp}]\nrepeats: 8\nmax_repeats: 0\n"), "d")
	require.NoError(t, err)
	assert.Zero(t, zero.MaxRepeats, "0 turns looks off, not the default")
	eight, err := ParseSpec([]byte("matrix: [{workload: fp}]\nrepeats: 8\n"), "d")
	require.NoError(t, err)
	assert.Equal(t, 24, eight.MaxRepeats, "the default follows the spec's repeats")
	assert.Equal(t, doc["order"], s.Order)
	assert.Equal(t, "4", doc["vm.cpus"])
	assert.Equal(t, defaultVMCPUs, s.VM.CPUs)
	assert.Equal(t, "100", doc["telemetry_ms"])
	assert.Equal(t, 100, s.TelemetryMs)
	assert.Equal(t, doc["matrix[].codec"], s.Matrix[1].Codec)
	assert.Equal(t, doc["matrix[].sink"], s.Matrix[1].Sink)
	assert.Equal(t, "1GiB", doc["matrix[].size"])
	assert.Equal(t, int64(1<<30), s.Matrix[1].SizeBytes)
	assert.Contains(t, doc["matrix[].loops"], "fp 2e8")
	assert.Equal(t, uint64(2e8), s.Matrix[0].Loops)
	assert.Equal(t, "1", doc["data_seed"])
	assert.Equal(t, uint64(1), s.DataSeed)
}
