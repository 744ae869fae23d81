package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/doctor"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/render"
)

// TestDoctorMark: only what a run needs and lacks is MISSING (and fails
// doctor); a KVM that is there but unusable is a warning, and an optional
// tool that is not installed is absent, not ok.
func TestDoctorMark(t *testing.T) {
	for _, tt := range []struct {
		name  string
		check doctor.Check
		want  string
	}{
		{"present", doctor.Check{Check: hv.Check{OK: true}}, "ok"},
		{"needed and missing", doctor.Check{Check: hv.Check{}}, "MISSING"},
		{"unusable KVM", doctor.Check{Check: hv.Check{OK: true, Warn: true}}, "warn"},
		{"optional, not installed", doctor.Check{Check: hv.Check{OK: true, Absent: true}}, "absent"},
		{"not for this platform", doctor.Check{Check: hv.Check{OK: true}, NotApplicable: true}, "n/a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, doctorMark(tt.check))
		})
	}
}

// doctor's --format md and csv are its table with headings and the fix in
// a column of its own; json is --json's, the checks as they are; text
// colours each mark from its check's outcome (doctorTone).
func TestDoctorFormats(t *testing.T) {
	empty := t.TempDir()
	run := func(format string) string {
		streams, out, _ := testIO()
		o := &doctorOptions{IO: streams, Format: format, AgentPath: filepath.Join(empty, "no-agent"),
			VMEnv:       guestvm.Env{Store: filepath.Join(empty, "images"), StateHome: empty, CacheDir: empty},
			KernelCache: filepath.Join(empty, "kernels")}
		err := doctorRun(context.Background(), o)
		if format != render.FormatJSON {
			require.Error(t, err, "the agent is missing: %s", format)
		}
		return out.String()
	}
	md := run(render.FormatMarkdown)
	assert.True(t, strings.HasPrefix(md, "| STATUS | CHECK | DETAIL | FIX |\n|---|---|---|---|\n| MISSING | host agent | "), md)
	assert.Regexp(t, `\| MISSING \| host agent \| [^|\n]+ \| make build \|\n`, md)

	recs, err := csv.NewReader(strings.NewReader(run(render.FormatCSV))).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"STATUS", "CHECK", "DETAIL", "FIX"}, recs[0])
	assert.Equal(t, []string{"MISSING", "host agent"}, recs[1][:2])
	assert.Equal(t, "make build", recs[1][3])

	var checks []doctor.Check
	require.NoError(t, json.Unmarshal([]byte(run(render.FormatJSON)), &checks))
	require.Len(t, checks, len(recs)-1, "a row per check")

	text := run(render.FormatText)
	assert.NotContains(t, text, "STATUS", "the terminal's view has no heading line")
	assert.Regexp(t, `\n {10,}fix: make build\n`, text, "a fix under its check's detail")
}

// A check's mark takes its tone from the check, never from its words.
func TestDoctorTone(t *testing.T) {
	assert.Equal(t, render.Yes, doctorTone(doctor.Check{Check: hv.Check{OK: true}}))
	assert.Equal(t, render.No, doctorTone(doctor.Check{Check: hv.Check{}}))
	assert.Equal(t, render.Warning, doctorTone(doctor.Check{Check: hv.Check{OK: true, Warn: true}}))
	assert.Equal(t, render.Plain, doctorTone(doctor.Check{Check: hv.Check{OK: true, Absent: true}}))
	assert.Equal(t, render.Plain, doctorTone(doctor.Check{Check: hv.Check{OK: true}, NotApplicable: true}))
}
