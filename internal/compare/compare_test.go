package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The three fixture runs (testdata/results/README.md): two of the built-in
// contention spec, and a shorter one that never ran background at 2 threads
// and was interrupted.
var fixtures = []string{"compare-a", "compare-b", "compare-c"}

func loadFixtures(t *testing.T) []*results.Loaded {
	t.Helper()
	var out []*results.Loaded
	for _, f := range fixtures {
		l, err := results.Load(filepath.Join("..", "..", "testdata", "results", f))
		require.NoError(t, err)
		l.Path = f // the legend shows the directory as given: keep the goldens independent of the checkout
		out = append(out, l)
	}
	return out
}

func build(t *testing.T, given map[string]string) *Comparison {
	t.Helper()
	loaded := loadFixtures(t)
	labels := Labels(loaded, given)
	in := make([]Input, len(loaded))
	for i, l := range loaded {
		in[i] = Input{Label: labels[i], Loaded: l}
	}
	c, err := Build(in)
	require.NoError(t, err)
	return c
}

func TestGoldenOutputs(t *testing.T) {
	c := build(t, nil)
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, format, c))
			ext := map[string]string{"table": "txt", "csv": "csv", "markdown": "md", "json": "json"}[format]
			golden := filepath.Join("testdata", "three-runs."+ext)
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./internal/compare -update to write it")
			assert.Equal(t, string(want), buf.String())
		})
	}
}

// The cell run c lacks is a row with "missing" in its column, not a dropped
// row, and the geometric means are over the cells every run has.
func TestMissingCellIsShown(t *testing.T) {
	c := build(t, nil)
	var found bool
	for _, r := range c.Rows {
		if r.Target == "host" && r.QoS == 9 && r.Threads == 2 {
			found = true
			assert.True(t, r.Values[0].Present)
			assert.True(t, r.Values[1].Present)
			assert.False(t, r.Values[2].Present, "compare-c never ran background at 2 threads")
			assert.Nil(t, r.Values[2].Delta)
		}
	}
	require.True(t, found, "the row stays")
	for _, g := range c.Geomeans {
		assert.Equal(t, 3, g.Cells, "%s %s: four cells, one missing from compare-c", g.Workload, g.Target)
	}
	var out bytes.Buffer
	require.NoError(t, Write(&out, "table", c))
	assert.Regexp(t, `host\s+9 background\s+2\s+\S+ ±\d+%\s+\S+ ±\d+%\s+~ \(p=[\d.]+\)\s+missing\n`, out.String())
}

// The spec, the cell duration and the work differ between c and the
// others: the table says so above the rows, key by key.
func TestDifferencesAreNamed(t *testing.T) {
	c := build(t, nil)
	keys := map[string][]string{}
	for _, d := range c.Differences {
		keys[d.Key] = d.Values
	}
	assert.Equal(t, []string{"contention", "contention", "contention-short"}, keys["spec"])
	assert.Equal(t, []string{"duration 1s", "duration 1s", "duration 500ms"}, keys["fp work"])
	assert.NotContains(t, keys, "accel", "all three ran under TCG")
	assert.Contains(t, c.DifferenceText(), "differ")
}

func TestLabels(t *testing.T) {
	loaded := loadFixtures(t)
	def := Labels(loaded, nil)
	assert.Equal(t, []string{"vm, Debian 12 (bookworm) #1", "vm, Debian 12 (bookworm) #2", "vm, Debian 12 (bookworm) #3"}, def,
		"host name and OS version from run.json, numbered when runs share them")
	given := Labels(loaded, map[string]string{"compare-c": "short"})
	assert.Equal(t, []string{"vm, Debian 12 (bookworm) #1", "vm, Debian 12 (bookworm) #2", "short"}, given)

	_, err := Build([]Input{{Label: "x", Loaded: loaded[0]}, {Label: "x", Loaded: loaded[1]}})
	assert.ErrorContains(t, err, `label "x" names both compare-a and compare-b`)
	_, err = Build([]Input{{Label: "x", Loaded: loaded[0]}})
	assert.ErrorContains(t, err, "two or more")
}

func TestFindingsAcrossRuns(t *testing.T) {
	c := build(t, nil)
	var kinds []string
	for _, f := range c.Findings {
		kinds = append(kinds, f.Kind+" "+f.Target)
		for i, v := range f.Values {
			require.True(t, v.Present, "%s in run %d", f.Kind, i+1)
			assert.LessOrEqual(t, float64(v.Low), float64(v.Median))
			assert.GreaterOrEqual(t, float64(v.High), float64(v.Median))
		}
	}
	assert.Equal(t, []string{"subsumption_index ", "qos_sensitivity host", "qos_sensitivity vm"}, kinds)
	for _, f := range c.Findings {
		assert.Equal(t, []int{1}, f.Threads, "compare-c ran background at 1 thread only: every column is judged at 1 thread")
	}
	assert.Equal(t, []string{"inconclusive", "yes", "yes"}, []string{c.Findings[0].Values[0].Outcome, c.Findings[0].Values[1].Outcome, c.Findings[0].Values[2].Outcome},
		"at 1 thread, compare-a's VM interval [0.598x..1.71x] straddles the margin")
}

// Every row of the CSV has the header's columns, and each run's line of a
// missing cell says present false with no value.
func TestCSVShape(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, build(t, nil)))
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, CSVHeader(), recs[0])
	missing := 0
	for _, r := range recs[1:] {
		if r[0] == "cell" && r[9] == "false" {
			missing++
			assert.Empty(t, r[11])
		}
	}
	assert.Equal(t, 2, missing, "host and vm background at 2 threads in compare-c")
}

func TestJSONNaNIsNull(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "json", build(t, nil)))
	var v map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &v), "NaN must not make the JSON invalid")
	assert.Contains(t, buf.String(), `"median": null`, "a missing cell's median")
}

func TestUnknownFormat(t *testing.T) {
	err := Write(&bytes.Buffer{}, "xml", build(t, nil))
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), `"xml"`) && strings.Contains(err.Error(), "table, csv, markdown, json"), err.Error())
}

func TestDefaultLabel(t *testing.T) {
	run := func(info string) *results.Loaded {
		l := &results.Loaded{Dir: &results.Dir{Path: "/r/contention-20261124T000000Z"}}
		l.Run.Targets = map[string]json.RawMessage{}
		if info != "" {
			l.Run.Targets["host"] = json.RawMessage(info)
		}
		return l
	}
	assert.Equal(t, "mini.local, macOS 15.1", DefaultLabel(run(`{"hostname":"mini.local","os_version":"macOS 15.1"}`)))
	assert.Equal(t, "box, Debian 12 (bookworm)", DefaultLabel(run(`{"hostname":"box","os_version":"Debian GNU/Linux 12 (bookworm), Linux 6.1.0-56-amd64"}`)))
	assert.Equal(t, "Linux 6.1.0", DefaultLabel(run(`{"hostname":"(none)","os_version":"Linux 6.1.0"}`)), "a guest-like host without a name")
	assert.Equal(t, "contention-20261124T000000Z", DefaultLabel(run("")), "nothing recorded: the directory's name")
}

// A change is marked * when the two runs' repeats cannot reach p < 0.05
// however large it is: 3 against 3 (smallest p 0.1) and 2 against 3 (0.2),
// not 6 against 6 (0.0022) or 3 against 5 (0.036).
func TestDeltaMarksRepeatsTooFewToTell(t *testing.T) {
	c := &Comparison{Alpha: 0.05}
	for _, tc := range []struct {
		base, other int
		star        bool
	}{{3, 3, true}, {2, 3, true}, {6, 6, false}, {3, 5, false}} {
		d := &Delta{Ratio: 3, P: 0.1}
		got := c.deltaText(Value{Present: true, N: tc.base}, Value{Present: true, N: tc.other, Delta: d})
		assert.Equal(t, tc.star, strings.HasSuffix(got, " *"), "%d vs %d: %q", tc.base, tc.other, got)
	}
	assert.Equal(t, "no baseline", c.deltaText(Value{}, Value{Present: true, N: 6}))
	assert.Equal(t, "", c.deltaText(Value{Present: true, N: 6}, Value{}))
	assert.Equal(t, "+200.0% (p=0.002)", c.deltaText(Value{Present: true, N: 6}, Value{Present: true, N: 6, Delta: &Delta{Ratio: 3, P: 0.002, Significant: true}}))
}

// A run in the vz device model differs in shape from one in QEMU's own.
func TestAppliedAccelNamesTheModel(t *testing.T) {
	run := func(machines string) results.Run { return results.Run{Machines: json.RawMessage(machines)} }
	assert.Equal(t, "qemu tcg", appliedAccel(run(`{"vm": {"backend": "qemu", "accel": "tcg"}}`), experiment.Spec{}))
	assert.Equal(t, "qemu tcg, model vz", appliedAccel(run(`{"vm": {"backend": "qemu", "accel": "tcg", "model": "vz"}}`), experiment.Spec{}))
}
