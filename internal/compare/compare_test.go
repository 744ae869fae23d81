package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
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
	for _, format := range render.Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, format, c))
			ext := map[string]string{"text": "txt", "csv": "csv", "md": "md", "json": "json"}[format]
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
	require.NoError(t, Write(&out, "text", c))
	assert.Regexp(t, `\nhost +9 background +2 +11-24 22:53 +missing\n`, out.String(), "three runs' columns are wider than 100: a row per run")
	out.Reset()
	c.Layout = LayoutColumns
	require.NoError(t, Write(&out, "markdown", c))
	assert.Regexp(t, `\| host \| 9 background \| 2 \| \S+ \[\S+\] \| \S+ \[\S+\] \| ~ \(p=[\d.]+\) \| missing \|`, out.String())
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
	assert.Equal(t, []string{"11-24 22:49", "11-24 22:50", "11-24 22:53"}, def,
		"every run is on the host called vm: the start times tell them apart, and no column reads as the vm target")
	given := Labels(loaded, map[string]string{"compare-c": "short"})
	assert.Equal(t, []string{"11-24 22:49", "11-24 22:50", "short"}, given)

	_, err := Build([]Input{{Label: "x", Loaded: loaded[0]}, {Label: "x", Loaded: loaded[1]}})
	assert.ErrorContains(t, err, `label "x" names both compare-a and compare-b`)
	_, err = Build([]Input{{Label: "x", Loaded: loaded[0]}})
	assert.ErrorContains(t, err, "two or more")
}

// Default labels are short, unique and never a target's name.
func TestDefaultLabels(t *testing.T) {
	run := func(host, started string) *results.Loaded {
		l := &results.Loaded{Dir: &results.Dir{Path: "/r/contention-" + started}}
		l.Run.Targets = results.Targets{}
		if host != "" {
			info, err := results.RecordInfo(json.RawMessage(`{"hostname":"` + host + `","os_version":"macOS 15.1"}`))
			require.NoError(t, err)
			l.Run.Targets["host"] = info
		}
		if started != "" {
			at, err := time.Parse("20060102T150405Z", started)
			require.NoError(t, err)
			l.Run.Started = at
		}
		return l
	}
	cases := []struct {
		name string
		runs []*results.Loaded
		want []string
	}{
		{"distinct hosts", []*results.Loaded{run("mini.local", "20261124T080000Z"), run("studio", "20261124T090000Z")}, []string{"mini", "studio"}},
		{"one host: start times", []*results.Loaded{run("box", "20261124T080000Z"), run("box", "20261125T093000Z")}, []string{"11-24 08:00", "11-25 09:30"}},
		{"a host twice among others", []*results.Loaded{run("box", "20261124T080000Z"), run("box", "20261124T090000Z"), run("mini", "20261124T100000Z")},
			[]string{"box 11-24 08:00", "box 11-24 09:00", "mini"}},
		{"a host named like a target", []*results.Loaded{run("vm", "20261124T080000Z"), run("host", "20261124T090000Z")}, []string{"vm 11-24 08:00", "host 11-24 09:00"}},
		{"the same minute: seconds", []*results.Loaded{run("box", "20261124T080001Z"), run("box", "20261124T080059Z")}, []string{"11-24 08:00:01", "11-24 08:00:59"}},
		{"the same second: by directory", []*results.Loaded{run("box", "20261124T080001Z"), run("box", "20261124T080001Z")}, []string{"contention-20261124T080001Z #1", "contention-20261124T080001Z #2"}},
		{"no host recorded", []*results.Loaded{run("", "20261124T080000Z"), run("(none)", "20261124T090000Z")}, []string{"11-24 08:00", "11-24 09:00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Labels(c.runs, nil)
			assert.Equal(t, c.want, got)
			for _, l := range got {
				assert.False(t, isTarget(l), "%q reads as a target", l)
			}
		})
	}
}

// Two arguments that are one run get a note, whether the same directory or
// a copy of it.
func TestSameRunNote(t *testing.T) {
	a := filepath.Join("..", "..", "testdata", "results", "compare-a")
	la, err := results.Load(a)
	require.NoError(t, err)
	lb, err := results.Load(a + "/")
	require.NoError(t, err)
	lc, err := results.Load(filepath.Join("..", "..", "testdata", "results", "compare-b"))
	require.NoError(t, err)
	c, err := Build([]Input{{Label: "one", Loaded: la}, {Label: "two", Loaded: lb}, {Label: "other", Loaded: lc}})
	require.NoError(t, err)
	require.Len(t, c.Notes, 1)
	assert.Contains(t, c.Notes[0], "one ("+a+") and two")
	assert.Contains(t, c.Notes[0], "the same directory")
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "table", c))
	assert.Contains(t, buf.String(), "note: one ("+a)

	cp := *lc.Dir
	copied := &results.Loaded{Dir: &cp, Records: lc.Records, Samples: lc.Samples}
	copied.Path = t.TempDir()
	c, err = Build([]Input{{Label: "b", Loaded: lc}, {Label: "fetched", Loaded: copied}})
	require.NoError(t, err)
	require.Len(t, c.Notes, 1)
	assert.Contains(t, c.Notes[0], "copies of one run")
}

// Quick and partial runs are marked wherever their column is shown.
func TestQuickAndPartialMarked(t *testing.T) {
	col := Column{Label: "mini"}
	assert.Equal(t, "mini", col.Heading())
	col.Quick = true
	assert.Equal(t, "mini (quick)", col.Heading())
	col.Partial = true
	assert.Equal(t, "mini (quick, partial)", col.Heading())

	c := build(t, nil)
	c.Columns[1].Quick = true
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "table", c))
	assert.Contains(t, buf.String(), "11-24 22:50 (quick)")
	assert.Contains(t, buf.String(), "(quick): a --quick run")
}

// A change reads in percent while small, as a ratio beyond; an interval as
// ±N% only while small and symmetric.
func TestNotation(t *testing.T) {
	for _, tc := range []struct {
		r    float64
		want string
	}{{1.04, "+4.0%"}, {0.9, "-10.0%"}, {1.5, "+50.0%"}, {0.005, "0.005x"}, {201, "201x"}, {198.489, "198x"}, {0.5, "0.5x"}, {math.NaN(), "n/a"}} {
		assert.Equal(t, tc.want, ChangeText(analysis.Float(tc.r)), "%g", tc.r)
	}
	v := func(m, lo, hi float64) Value {
		return Value{Present: true, N: 6, Median: analysis.Float(m), Low: analysis.Float(lo), High: analysis.Float(hi)}
	}
	assert.Equal(t, "100 ±5%", rateText(v(100, 95, 104), 1, 6))
	assert.Equal(t, "2.552M [611.6k..4.491M]", rateText(v(2.552e6, 0.6116e6, 4.491e6), 1, 6), "-76%/+76%: too wide for ±")
	assert.Equal(t, "100 [90..101]", rateText(v(100, 90, 101), 1, 6), "10% below, 1% above: asymmetric")
	few := v(100, 99.5, 100.6)
	few.N = 3
	assert.Equal(t, "100 ±1% (n=3)", rateText(few, 1, 6))
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
	assert.Equal(t, []string{"inconclusive", "inconclusive", "yes"}, []string{c.Findings[0].Values[0].Outcome, c.Findings[0].Values[1].Outcome, c.Findings[0].Values[2].Outcome},
		"at 1 thread, the VM's 90% intervals of compare-a [0.613x..1.65x] and compare-b [0.857x..1.45x] cross the band's edge 1.25x; compare-c's [0.869x..1.24x] lies inside")
}

// Every row of the CSV has the header's columns, and each run's line of a
// missing cell says present false with no value.
func TestCSVShape(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, build(t, nil)))
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, csvHeader(), recs[0])
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
	assert.True(t, strings.Contains(err.Error(), `"xml"`) && strings.Contains(err.Error(), "text, md, json, csv (or markdown, table)"), err.Error())
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
	assert.Equal(t, "3x (p=0.002)", c.deltaText(Value{Present: true, N: 6}, Value{Present: true, N: 6, Delta: &Delta{Ratio: 3, P: 0.002, Significant: true}}))
}

// The CSV's numbers read back as exactly the comparison's.
func TestCSVRoundTrip(t *testing.T) {
	c := build(t, nil)
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, c))
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	var cells []float64
	for _, r := range recs[1:] {
		if r[0] == "cell" && r[9] == "true" {
			v, err := strconv.ParseFloat(r[11], 64)
			require.NoError(t, err)
			cells = append(cells, v)
		}
	}
	var want []float64
	for _, r := range c.Rows {
		for _, v := range r.Values {
			if v.Present {
				want = append(want, float64(v.Median))
			}
		}
	}
	assert.Equal(t, want, cells, "exact, not 6 significant digits")
}

// A run in the vz device model differs in shape from one in QEMU's own.
func TestAppliedAccelNamesTheModel(t *testing.T) {
	run := func(machines string) results.Run {
		m, err := results.DecodeRecorded[map[string]hv.MachineInfo](json.RawMessage(machines))
		require.NoError(t, err)
		return results.Run{Machines: m}
	}
	assert.Equal(t, "qemu tcg", appliedAccel(run(`{"vm": {"backend": "qemu", "accel": "tcg"}}`), spec.Spec{}))
	assert.Equal(t, "qemu tcg, model vz", appliedAccel(run(`{"vm": {"backend": "qemu", "accel": "tcg", "model": "vz"}}`), spec.Spec{}))
}

// A cell whose repeats did no work is there, idle, not missing; one with
// some idle repeats says how many beside its n.
func TestIdleRepeatsBesideN(t *testing.T) {
	assert.Equal(t, "no work (6 idle)", rateText(Value{Present: true, Idle: 6, Median: nan(), Low: nan(), High: nan()}, 1, 6))
	assert.Equal(t, "10 ±10% (n=4 +2 idle)", rateText(Value{Present: true, N: 4, Idle: 2, Median: 10, Low: 9, High: 11}, 1, 6))
	key := analysis.CellKey{Target: "vm", Workload: "fp", QoS: 9, Threads: 1}
	cell := func(rates ...float64) []analysis.Cell {
		var obs []analysis.Observation
		for r, x := range rates {
			obs = append(obs, analysis.Observation{CellKey: key, Repeat: r + 1, EndNs: 1e9, Work: x, Rate: x, Unit: "loops"})
		}
		return analysis.Cells(obs)
	}
	rs := rows([][]analysis.Cell{cell(10, 11, 9, 10), cell(0, 0, 0), cell(10, 0, 11, 9)})
	require.Len(t, rs, 1)
	v := rs[0].Values
	assert.True(t, v[1].Present, "a cell that did no work ran: it is not missing")
	assert.Equal(t, 3, v[1].Idle)
	assert.Nil(t, v[1].Delta, "no rate to compare")
	assert.Equal(t, 3, v[2].N)
	assert.Equal(t, 1, v[2].Idle)
	assert.Equal(t, analysis.Float(10), v[2].Median, "the idle repeat is not in the median")
}

// A change counts against a limit when significant and beyond it, and,
// where interfered cell runs stand behind it, only when it still is
// without them.
func TestDeltaCounts(t *testing.T) {
	beyond10 := func(r float64) bool { return math.Max(r, 1/r) > 1.1 }
	without := func(ratio float64, sig bool) *DeltaInterference {
		return &DeltaInterference{Runs: 3, Of: 12, OtherCPU: 0.5, Without: &Delta{Ratio: analysis.Float(ratio), P: 0.024, Significant: sig}}
	}
	for _, tc := range []struct {
		name  string
		d     *Delta
		count bool
		ratio float64
	}{
		{"no change", nil, false, 0},
		{"significant and beyond", &Delta{Ratio: 0.79, Significant: true}, true, 0.79},
		{"significant, within", &Delta{Ratio: 0.95, Significant: true}, false, 0},
		{"beyond, not significant", &Delta{Ratio: 0.5}, false, 0},
		{"other work explains it: within the limit without the interfered runs", &Delta{Ratio: 0.79, Significant: true, Interference: without(0.973, true)}, false, 0},
		{"without them, not significant", &Delta{Ratio: 0.79, Significant: true, Interference: without(0.8, false)}, false, 0},
		{"it stands without them", &Delta{Ratio: 0.65, Significant: true, Interference: without(0.81, true)}, true, 0.81},
		{"no repeat left without them", &Delta{Ratio: 0.65, Significant: true, Interference: &DeltaInterference{Runs: 6, Of: 12}}, false, 0},
	} {
		r, ok := tc.d.Counts(beyond10)
		assert.Equal(t, tc.count, ok, tc.name)
		assert.InDelta(t, tc.ratio, float64(r), 1e-12, tc.name)
	}
}

// A run whose looks added repeats says so in its shape: another run of the
// same spec that stopped at its planned repeats differs from it there.
func TestRepeatsTextSaysTheLooks(t *testing.T) {
	assert.Equal(t, "6", repeatsText(6, nil))
	looks := []results.Look{
		{Index: 2, Blocks: []results.LookBlock{{Workload: "fp", From: 7, To: 12}}},
		{Index: 3, Blocks: []results.LookBlock{{Workload: "fp", From: 13, To: 18}}},
	}
	assert.Equal(t, "6, up to 18 after 3 looks", repeatsText(6, looks))
}

// Runs whose host's other work differs say so once, with each run's median
// and who took most; alike runs, or runs without a host view, say nothing.
func TestOtherWorkNote(t *testing.T) {
	quiet := &analysis.OtherWork{Runs: 48, Median: 0.01, Max: 0.05}
	busy := &analysis.OtherWork{Runs: 48, Busy: 42, Median: 0.22, Max: 0.28, Others: []hostview.Process{{PID: 29938, Name: "python3", CPUNs: 9e9}}}
	assert.Equal(t, []string{"other work on the host differs between the runs (CPU it took in the median cell run): a 0.01 CPU, b 0.22 CPU (python3, pid 29938): " +
		"a change beside it may be the other work's, not the machine's"}, otherWorkNote([]Column{{Label: "a", OtherWork: quiet}, {Label: "b", OtherWork: busy}}))
	assert.Nil(t, otherWorkNote([]Column{{Label: "a", OtherWork: busy}, {Label: "b", OtherWork: busy}}), "alike")
	assert.Nil(t, otherWorkNote([]Column{{Label: "a"}, {Label: "b", OtherWork: busy}}), "one run without a view: nothing to compare")
	assert.Equal(t, "0.22 CPU in the median cell run (0.28 CPU at most), 0.1 CPU or more in 42 of 48 (python3, pid 29938)", render.OtherWork(busy))
	assert.Empty(t, render.OtherWork(quiet))
}

// compare.md and the terminal say the same: where neither has to narrow
// a table, the file's document is the text view's, block for block, and
// the Markdown is render's of it.
func TestMarkdownIsTheView(t *testing.T) {
	c := build(t, nil)
	assert.Equal(t, c.View(1000), c.Document())
	var md, want bytes.Buffer
	require.NoError(t, Write(&md, render.FormatMarkdown, c))
	require.NoError(t, render.MarkdownWrapped(&want, c.View(1000), markdownWidth))
	assert.Equal(t, want.String(), md.String())
}
