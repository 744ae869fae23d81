package cli

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/termcolor"
)

// Bench says each warning once: the table's writer notes the warnings
// written to it as warnings, and the saved run's summary after it leaves
// those out; text passes as it is, whatever it reads like, and a warning
// goes on as one, so a terminal behind still colours it.
func TestWarningFilterSaysEachWarningOnce(t *testing.T) {
	var out bytes.Buffer
	colored := &colorWriter{w: &out}
	said := map[string]bool{}
	table := &warningFilter{w: colored, seen: func(w string) { said[w] = true }}
	_, err := table.Write([]byte("TABLE\nwarning: text, not a warning\n"))
	require.NoError(t, err)
	require.NoError(t, termcolor.Warn(table, "  warning: a", "a"))
	assert.Equal(t, map[string]bool{"a": true}, said)

	summary := &warningFilter{w: colored, drop: func(w string) bool { return said[w] }}
	require.NoError(t, termcolor.Warn(summary, "warning: a", "a"))
	require.NoError(t, termcolor.Warn(summary, "- **warning:** b", "b"))
	assert.Equal(t, "TABLE\nwarning: text, not a warning\n"+
		termcolor.Paint(termcolor.Yellow, "  warning: a")+"\n"+
		termcolor.Paint(termcolor.Yellow, "- **warning:** b")+"\n", out.String())
}
