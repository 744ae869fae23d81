package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/spec"
)

func TestSpecsListAndShow(t *testing.T) {
	streams, out, _ := testIO()
	require.NoError(t, specsListRun(context.Background(), &specsOptions{IO: streams}))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 1+len(spec.DefaultSpecNames()))
	for i, name := range []string{"allocation", "batches", "contention", "pi", "subsumption"} {
		assert.True(t, strings.HasPrefix(lines[i+1], name+" "), lines[i+1])
	}

	// show prints the spec exactly as built in, and it runs as a --spec.
	out.Reset()
	require.NoError(t, specsShowRun(context.Background(), &specsOptions{IO: streams, Name: "batches"}))
	src, err := spec.DefaultSpecSource("batches")
	require.NoError(t, err)
	assert.Equal(t, string(src), out.String())
	_, err = spec.ParseSpec(out.Bytes(), "copy")
	require.NoError(t, err)

	err = specsShowRun(context.Background(), &specsOptions{IO: streams, Name: "batch"})
	require.Error(t, err)
	assert.True(t, isUsageError(err))
	assert.Contains(t, err.Error(), `spec "batch": allowed allocation, batches, contention, pi, subsumption; did you mean batches?`)
}

// specs list --json prints each built-in spec as run.json records one,
// with its --quick form, and it reads back as a spec.
func TestSpecsListJSON(t *testing.T) {
	out, stderr, code := runRoot(t, nil, "specs", "list", "--json")
	require.Equal(t, 0, code, stderr)
	var specs []struct {
		spec.Spec
		Quick spec.Spec `json:"quick_spec"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &specs))
	require.Len(t, specs, len(spec.DefaultSpecNames()))
	for i, name := range spec.DefaultSpecNames() {
		s := specs[i]
		assert.Equal(t, name, s.Name)
		assert.NotEmpty(t, s.Description)
		assert.Equal(t, spec.DefaultRepeats, s.Repeats)
		require.NoError(t, s.Validate(), name)
		assert.True(t, s.Quick.Quick, "%s: quick_spec is the --quick form", name)
		assert.False(t, s.Spec.Quick, name)
	}
}
