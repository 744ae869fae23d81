package benchdoc

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/termcolor"
)

var ansi = regexp.MustCompile("\033\\[[0-9;]*m")

// richDoc is a bench of every kind of line: two targets or one, a cell
// whose repeats disagree, a class not applied, a short cell's warning, a
// run's note that reads like a warning, a device model and an error.
func richDoc(targets ...string) *Bench {
	b := benchDoc(targets...)
	for _, target := range targets {
		for rep, bg := range []float64{1.6e6, 527e6, 1.7e6} {
			b.Samples = append(b.Samples,
				results.Sample{Target: target, Workload: "fp", QoS: 9, Threads: 1, Repeat: rep + 1, EndNs: 1e9, Work: bg, Unit: "loops", Rate: bg, QoSApplied: 9, QoSFull: true},
				results.Sample{Target: target, Workload: "fp", QoS: 33, Threads: 1, Repeat: rep + 1, EndNs: 1e9, Work: 3e8, Unit: "loops", Rate: 3e8, QoSApplied: 21, QoSReason: "no CAP_SYS_NICE"})
		}
	}
	b.Runs[0].Notes = []string{"warning: words in a note are a note's"}
	b.warnings = []string{"host fp qos=background threads=1 ran 10ms (< 250ms): scheduler placement can decide a cell this short; use duration: 1s (bench: --duration 1s) or more loops"}
	b.Machines = map[string]hv.MachineInfo{"vm": {Backend: "qemu", Accel: "tcg", Model: hv.ModelVZ}}
	b.Error = "stopped"
	return b
}

func write(t *testing.T, format string, b *Bench, term Terminal) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, WriteBench(&out, format, b, term))
	return out.String()
}

// The older names of the formats still work and give the same bytes; an
// unknown one names what is allowed.
func TestBenchFormatsAndTheirAliases(t *testing.T) {
	b := richDoc("host", "vm")
	assert.Equal(t, write(t, render.FormatText, b, Terminal{}), write(t, "table", b, Terminal{}))
	assert.Equal(t, write(t, render.FormatMarkdown, b, Terminal{}), write(t, "markdown", b, Terminal{}))
	md := write(t, render.FormatMarkdown, b, Terminal{})
	assert.True(t, strings.HasPrefix(md, "| workload | qos | threads | phase | n | host seconds | host total rate |"), md)
	assert.Contains(t, md, "\n- **warning:** host fp qos=background threads=1 ran 10ms (< 250ms)", "a warning's label is strong")
	assert.Contains(t, md, "\n- **note:** warning: words in a note are a note's")
	assert.Contains(t, md, "  - vm user-interactive: no CAP_SYS_NICE", "the reasons under their legend")
	assert.Contains(t, md, "\nincomplete: 12 cell runs finished before the run stopped\n")
	var doc Bench
	require.NoError(t, json.Unmarshal([]byte(write(t, render.FormatJSON, b, Terminal{})), &doc))
	assert.Len(t, doc.Samples, len(b.Samples))
	assert.Len(t, doc.Warnings, 2, "one per target's disagreeing cell")
	err := WriteBench(&bytes.Buffer{}, "xml", b, Terminal{})
	assert.EqualError(t, err, `unknown format "xml": allowed text, md, json, csv (or markdown, table)`)
}

// The text fits 100 columns, whatever it holds; where it leaves columns
// out it says which, and Markdown has them all.
func TestBenchTextFitsTheWidth(t *testing.T) {
	for _, targets := range [][]string{{"host"}, {"host", "vm"}} {
		for _, colour := range []bool{false, true} {
			out := write(t, render.FormatText, richDoc(targets...), Terminal{Width: 100, Colour: colour})
			for _, l := range strings.Split(out, "\n") {
				assert.LessOrEqual(t, len([]rune(ansi.ReplaceAllString(l, ""))), 100, "%v: %q", targets, l)
			}
			assert.Contains(t, out, "TOTAL RATE")
			assert.Contains(t, strings.Join(strings.Fields(out), " "), "--format md shows every column.")
		}
	}
	out := write(t, render.FormatText, richDoc("host"), Terminal{Width: 200})
	assert.Contains(t, out, "TARGET  WORKLOAD  QOS", "at 200 columns every column is there")
	assert.NotContains(t, out, "Left out")
}

// Colour comes from the tones only: the cell whose repeats disagree, a
// class not applied and the warnings are yellow; a note that reads like a
// warning is not; the text without colour is the same text.
func TestBenchColoursOnlyFromTones(t *testing.T) {
	b := richDoc("host")
	coloured := write(t, render.FormatText, b, Terminal{Width: 1000, Colour: true})
	plain := write(t, render.FormatText, b, Terminal{Width: 1000})
	assert.Equal(t, plain, ansi.ReplaceAllString(coloured, ""))
	yellow := regexp.MustCompile(regexp.QuoteMeta(termcolor.Yellow) + "([^\033]*)\033\\[0m")
	var painted []string
	for _, m := range yellow.FindAllStringSubmatch(coloured, -1) {
		painted = append(painted, m[1])
	}
	assert.Equal(t, len(ansi.FindAllString(coloured, -1)), 2*len(painted), "yellow is the one colour")
	joined := strings.Join(painted, " ")
	assert.Contains(t, joined, "1.7M [1.6M..527M] cv 171.6% !", "the disagreeing cell")
	assert.Contains(t, joined, "default (other class)", "the class not applied")
	assert.Contains(t, joined, "warning: host fp qos=background threads=1 ran 10ms")
	assert.NotContains(t, joined, "words in a note", "a note is no warning, whatever its words")
	assert.NotContains(t, joined, "300M [300M..300M] cv 0.0%", "a cell that agrees")
}

// The tidy CSV is scripted against: through render it is byte for byte
// what results.WriteCSV writes, quoting, empty cpu_ns and all.
func TestBenchCSVIsTheTidyCSV(t *testing.T) {
	samples := []results.Sample{
		{Target: "host", Workload: "compress", Phase: "compress", QoS: 9, Threads: 2, Repeat: 1, Index: 1, StartNs: 12, EndNs: 2079123456,
			Work: 8e6, Unit: "bytes", Rate: 2079123.5, QoSApplied: 9, QoSFull: true, CPUs: []int{0, 3}, PID: 42, Contention: 2, CPUNs: 1999},
		{Target: "vm", Workload: "fp", QoS: 33, Threads: 1, Repeat: 2, EndNs: 1e9, Work: 1e6, Unit: "loops", Rate: 1e6, QoSApplied: 21,
			QoSReason: `no CAP_SYS_NICE, "nice" refused`, QoSDetail: "line one\nline two"},
	}
	var want, got bytes.Buffer
	require.NoError(t, results.WriteCSV(&want, samples))
	b := &Bench{Samples: samples}
	require.NoError(t, WriteBench(&got, render.FormatCSV, b, Terminal{}))
	assert.Equal(t, want.String(), got.String())
	assert.True(t, strings.HasPrefix(got.String(), "target,workload,qos,threads,repeat,index,phase,start_ns,end_ns,work,unit,rate,"+
		"qos_applied,qos_full,qos_reason,qos_detail,cpus,pid,contention,cpu_ns\n"), got.String())
	assert.Contains(t, got.String(), "\nhost,compress,9,2,1,1,compress,12,2079123456,8e+06,bytes,2.0791235e+06,9,true,,,0 3,42,2,1999\n")

	got.Reset()
	require.NoError(t, WriteBench(&got, render.FormatCSV, &Bench{}, Terminal{}))
	want.Reset()
	require.NoError(t, results.WriteCSV(&want, nil))
	assert.Equal(t, want.String(), got.String(), "no records: the header alone")
}

// Said names the warnings under the table, so that a saved run's summary
// does not say them again.
func TestBenchSaidIsWhatTheTableWarns(t *testing.T) {
	b := richDoc("host")
	out := write(t, render.FormatText, b, Terminal{Width: 1000})
	require.Len(t, b.Said(), 2)
	for _, w := range b.Said() {
		assert.Contains(t, out, "- warning: "+w+"\n")
	}
	assert.Equal(t, 2, strings.Count(out, "warning: host"))
}
