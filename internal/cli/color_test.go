package cli

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/termcolor"
)

// Bench says each warning once: the saved run's summary after its table
// leaves out the warnings the table said (benchdoc.Bench.Said); text
// passes as it is, whatever it reads like, and a warning goes on as one,
// so a terminal behind still colours it.
func TestWarningFilterSaysEachWarningOnce(t *testing.T) {
	var out bytes.Buffer
	colored := &colorWriter{w: &out}
	said := map[string]bool{"a": true}
	summary := &warningFilter{w: colored, drop: func(w string) bool { return said[w] }}
	_, err := summary.Write([]byte("TABLE\nwarning: text, not a warning\n"))
	require.NoError(t, err)
	require.NoError(t, termcolor.Warn(summary, "warning: a", "a"))
	require.NoError(t, termcolor.Warn(summary, "- **warning:** b", "b"))
	assert.Equal(t, "TABLE\nwarning: text, not a warning\n"+
		termcolor.Paint(termcolor.Yellow, "- **warning:** b")+"\n", out.String())
}
