package compare

import (
	"bytes"
	"encoding/csv"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/testfleet"
)

// constructedFleet compares a constructed fleet of n machines
// (internal/testfleet), labelled as compare labels them.
func constructedFleet(t *testing.T, n int) *Comparison {
	t.Helper()
	return constructedFleetWith(t, n, testfleet.Options{})
}

// constructedFleetWith compares a constructed fleet of n machines that
// differ from the plain one as o says.
func constructedFleetWith(t *testing.T, n int, o testfleet.Options) *Comparison {
	t.Helper()
	dirs, err := testfleet.WriteWith(t.TempDir(), n, o)
	require.NoError(t, err)
	var loaded []*results.Loaded
	for _, d := range dirs {
		l, err := results.Load(d)
		require.NoError(t, err)
		loaded = append(loaded, l)
	}
	labels := Labels(loaded, nil)
	in := make([]Input, len(loaded))
	for i, l := range loaded {
		in[i] = Input{Label: labels[i], Loaded: l}
	}
	c, err := Build(in)
	require.NoError(t, err)
	return c
}

// Each run's row is its verdict over the cells the findings use: the
// same outcome and SI as the findings' subsumption index, and the host's
// and the VM's ratios with the 90% intervals that verdict judged.
func TestMachineVerdictIsTheRunsVerdict(t *testing.T) {
	c := build(t, nil)
	require.Len(t, c.Machines, 3, "one row per run: one workload judged")
	loaded := loadFixtures(t)
	for i, m := range c.Machines {
		assert.Equal(t, i, m.Run)
		assert.Equal(t, c.Columns[i].Label, m.Label)
		assert.Equal(t, "AMD EPYC", m.CPU)
		assert.Equal(t, "Debian GNU/Linux 12 (bookworm), Linux 6.18.44-fc-v595", m.OS)
		assert.Equal(t, "qemu tcg", m.VM)
		assert.Equal(t, []int{1}, m.Threads, "compare-c ran background at 1 thread only")
		si := c.Findings[0].Values[i]
		assert.Equal(t, si.Outcome, m.Outcome)
		assert.Equal(t, si.Median, m.SI)

		// The run's own verdict at 1 thread, as results show would judge it.
		var at1 []analysis.Cell
		for _, cell := range loaded[i].Cells() {
			if cell.Threads == 1 {
				at1 = append(at1, cell)
			}
		}
		v := summary.RunVerdicts(at1, loaded[i].Run)[0]
		assert.InDelta(t, v.Host.RatioEstimate(), float64(m.HostRatio.Value), 1e-9)
		assert.InDelta(t, math.Exp(float64(v.VM.Shift.Low)), float64(m.VMRatio.Low), 1e-9)
		assert.InDelta(t, 0.90, float64(m.VMRatio.Level), 1e-12, "the verdict's two one-sided tests at 5%")
		assert.Equal(t, v.Margin, m.Band)
	}
}

// The per-machine table leads every format; the machine columns every run
// shares are said once above it; each run that is not a yes says why.
func TestMachineSectionLeads(t *testing.T) {
	c := build(t, nil)
	s := c.MachineSection()
	assert.Equal(t, []string{"RUN", "VERDICT", "SI", "HOST 33/9", "VM 33/9"}, s.Header)
	assert.Equal(t, "Every run: CPU AMD EPYC; OS Debian GNU/Linux 12 (bookworm), Linux 6.18.44-fc-v595; VM qemu tcg; MECHANISM not recorded.", s.Lead)
	assert.Equal(t, []string{"11-24 22:53", "yes", "0.997 [0.951..1.031]", "267x [212..284]", "1.02x [0.869..1.24]"}, s.Rows[2])
	assert.Equal(t, []string{"11-24 22:49, 11-24 22:50: inconclusive: the vm ratio's interval crosses the band's edge: more repeats would tell"}, s.Notes)
	for format, head := range map[string]string{"text": "verdict per machine\n", "table": "verdict per machine\n", "markdown": "## verdict per machine\n"} {
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, format, c))
		assert.True(t, strings.HasPrefix(buf.String(), head), "%s begins with the table: %q", format, buf.String()[:40])
	}

	// Machines that differ show their own columns.
	c.Machines[1].CPU, c.Machines[1].VM = "Apple M2", "vz"
	s = c.MachineSection()
	assert.Equal(t, []string{"RUN", "CPU", "VM", "VERDICT", "SI", "HOST 33/9", "VM 33/9"}, s.Header)
	assert.Equal(t, "Every run: OS Debian GNU/Linux 12 (bookworm), Linux 6.18.44-fc-v595; MECHANISM not recorded.", s.Lead)
	assert.Equal(t, []string{"Apple M2", "vz"}, s.Rows[1][1:3])
}

// A run with no verdict (no VM) still has its row: its machine, "no
// verdict" and why, and the host's ratio with its 95% interval, said to be
// 95%; a run that did not come back has a row saying so.
func TestMachineWithoutVerdict(t *testing.T) {
	loaded := loadFixtures(t)
	hostOnly := *loaded[1]
	hostOnly.Samples = slices.DeleteFunc(slices.Clone(hostOnly.Samples), func(s results.Sample) bool { return s.Target == "vm" })
	c, err := Build([]Input{{Label: "both", Loaded: loaded[0]}, {Label: "host only", Loaded: &hostOnly}})
	require.NoError(t, err)
	c.Missing = []Missing{{Label: "gone", Reason: "unreachable"}}
	m := c.Machines[1]
	assert.Empty(t, m.Outcome)
	assert.Equal(t, "no vm target", m.Reason)
	assert.True(t, m.SI.IsNaN())
	assert.True(t, m.VMRatio.Value.IsNaN())
	assert.InDelta(t, 0.95, float64(m.HostRatio.Level), 1e-12)
	assert.Regexp(t, `^\d+x \[[\d.]+\.\.[\d.]+\] \(95%\)$`, m.HostRatio.Text())

	s := c.MachineSection()
	assert.Equal(t, []string{"host only", "no verdict", "-", m.HostRatio.Text(), "-", "-"}, s.Rows[1])
	assert.Equal(t, []string{"gone", "did not come back", "-", "-", "-", "-"}, s.Rows[2])
	assert.Contains(t, s.Notes, "host only: no verdict: no vm target")
}

// Ratios read as the verdict line writes them, with the coverage when it
// is not the verdict's 90%.
func TestRatioText(t *testing.T) {
	f := func(x float64) analysis.Float { return analysis.Float(x) }
	for _, tc := range []struct {
		r    Ratio
		want string
	}{
		{Ratio{Value: f(280.4), Low: f(234), High: f(301), Level: 0.9, Confidence: 0.907}, "280x [234..301]"},
		{Ratio{Value: f(1.01), Low: f(0.5), High: f(2), Level: 0.9, Confidence: 2.0 / 3}, "1.01x [0.5..2] (67%)"},
		{Ratio{Value: f(205), Low: f(121), High: f(472), Level: 0.95, Confidence: 0.96}, "205x [121..472] (95%)"},
		{Ratio{Value: f(math.NaN()), Low: f(math.NaN()), High: f(math.NaN())}, "-"},
	} {
		assert.Equal(t, tc.want, tc.r.Text())
	}
}

// The verdict lines lead the CSV, one per run, with the machine and both
// ratios in the columns after outcome; every line has the header's
// columns.
func TestCSVVerdictLines(t *testing.T) {
	c := build(t, nil)
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, c))
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for i, r := range recs[1:4] {
		assert.Equal(t, KindVerdict, r[col["kind"]])
		assert.Equal(t, strconv.Itoa(i+1), r[col["run"]])
		assert.Equal(t, c.Machines[i].Outcome, r[col["outcome"]])
		assert.Equal(t, "AMD EPYC", r[col["cpu"]])
		assert.Equal(t, "qemu tcg", r[col["vm"]])
		assert.Equal(t, "33/9", r[col["qos"]])
		v, err := strconv.ParseFloat(r[col["vm_ratio_hl"]], 64)
		require.NoError(t, err)
		assert.Equal(t, float64(c.Machines[i].VMRatio.Value), v, "exact")
	}
	assert.Equal(t, "cell", recs[4][col["kind"]], "the cells after the verdicts")
}

// A fleet of twelve (the playbook's twelve hosts, constructed here) reads
// in rows: no line of compare.md reaches 160 characters, and each machine
// has its row in the order given.
func TestTwelveMachinesInRows(t *testing.T) {
	c := constructedFleet(t, 12)
	assert.True(t, c.Rowwise(), "more than MaxColumns runs: rows")
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "markdown", c))
	md := buf.String()
	for _, line := range strings.Split(md, "\n") {
		assert.Less(t, len(line), 160, "%q", line)
	}
	assert.Contains(t, md, "| TARGET | QOS | THREADS | RUN | VALUE | VS BASE |")
	assert.Contains(t, md, "| host | 9 background | 1 | fleet-01 | ")
	assert.Regexp(t, `\| host \| 9 background \| 1 \| fleet-02 \| [^|]+ \| (~|\S+) \(p=[\d.]+\) \|`, md, "the change and its mark in the run's row")
	var order []string
	for _, m := range c.Machines {
		order = append(order, m.Label)
	}
	assert.Equal(t, []string{"fleet-01", "fleet-02", "fleet-03", "fleet-04", "fleet-05", "fleet-06", "fleet-07", "fleet-08", "fleet-09", "fleet-10", "fleet-11", "fleet-12"}, order)
	outcomes := map[string]bool{}
	for _, m := range c.Machines {
		outcomes[m.Outcome] = true
	}
	assert.Equal(t, map[string]bool{"yes": true, "no": true, "inconclusive": true}, outcomes, "the constructed fleet holds every verdict")

	var txt bytes.Buffer
	require.NoError(t, Write(&txt, "table", c))
	header := lineWith(t, txt.String(), "TARGET  QOS")
	assert.Equal(t, []string{"TARGET", "QOS", "THREADS", "RUN", "VALUE", "VS", "BASE"}, strings.Fields(header))
}

// lineWith is the first line of s that contains part.
func lineWith(t *testing.T, s, part string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, part) {
			return l
		}
	}
	t.Fatalf("no line with %q in\n%s", part, s)
	return ""
}

// --layout decides, whatever the count: three runs in rows, twelve in
// columns; a row per run repeats the cell's keys, the baseline's change
// reads "baseline"; the differences turn with the table.
func TestLayouts(t *testing.T) {
	c := build(t, nil)
	assert.False(t, c.Rowwise(), "three runs: columns")
	c.Layout = LayoutRows
	secs := c.Sections()
	assert.Equal(t, []string{"TARGET", "QOS", "THREADS", "RUN", "VALUE", "VS BASE"}, secs[0].Header)
	assert.Equal(t, []bool{false, false, true, false, true, true}, secs[0].Numeric)
	assert.Equal(t, []string{"host", "9 background", "1", "11-24 22:49", "2.552M [1.059M..4.491M]", "baseline"}, secs[0].Rows[0])
	assert.Equal(t, []string{"host", "9 background", "1", "11-24 22:53", "2.015M [1.726M..2.857M]", "~ (p=0.59)"}, secs[0].Rows[2])
	assert.Equal(t, []string{"host", "9 background", "2", "11-24 22:53", "missing", ""}, secs[0].Rows[5])
	assert.Equal(t, []string{"host", "geomean", "3 cells", "11-24 22:50", "104.1M", "-6.0%"}, secs[0].Rows[25])
	assert.Len(t, secs[0].Rows, 3*(8+2), "a row per run per cell and geomean")
	findings := secs[1]
	assert.Equal(t, []string{"FINDING", "WORKLOAD", "THREADS", "RUN", "VALUE", "VS BASE"}, findings.Header)
	assert.Equal(t, []string{"subsumption index", "fp", "1", "11-24 22:53", "0.997 [0.951..1.031] yes", "~"}, findings.Rows[2])
	head, rows := c.DifferenceTable()
	assert.Equal(t, []string{"RUN", "spec", "fp work"}, head)
	assert.Equal(t, []string{"11-24 22:53", "contention-short", "duration 500ms"}, rows[2])

	fleet := constructedFleet(t, 12)
	fleet.Layout = LayoutColumns
	assert.Len(t, fleet.Sections()[0].Header, 3+12+11, "a column per run and a change after each but the baseline")
}

// The golden three runs' Markdown: every line under 160 characters, the
// prose wrapped, the tables whole.
func TestMarkdownLines(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "markdown", build(t, nil)))
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.HasPrefix(line, "|") {
			assert.LessOrEqual(t, len(line), markdownWidth, "%q", line)
		}
	}
	assert.Contains(t, buf.String(), "## findings\n\nsubsumption index with its interval", "a section's heading is its name; what it shows a paragraph")
	assert.Contains(t, buf.String(), "## fp\n\nloops/s; median with its 95% interval.\n")
}

// Runs that judged different workloads: each run has a row per workload
// any run judged, its own verdict or why it has none, the workload named.
func TestMachineRowsPerWorkload(t *testing.T) {
	var in []Input
	for i, f := range []string{"linux-contention", "linux-fixture"} {
		l, err := results.Load(filepath.Join("..", "..", "testdata", "results", f))
		require.NoError(t, err)
		in = append(in, Input{Label: []string{"fp only", "four"}[i], Loaded: l})
	}
	c, err := Build(in)
	require.NoError(t, err)
	var got []string
	for _, m := range c.Machines {
		got = append(got, m.Label+" "+m.Workload+" "+m.OutcomeText())
	}
	assert.Equal(t, []string{
		"fp only compress no verdict", "fp only decompress no verdict", "fp only fp inconclusive", "fp only procs no verdict",
		"four compress inconclusive", "four decompress inconclusive", "four fp inconclusive", "four procs inconclusive",
	}, got)
	assert.Equal(t, "the run has no compress", c.Machines[0].Reason)
	s := c.MachineSection()
	assert.Equal(t, "WORKLOAD", s.Header[1])
	assert.Contains(t, s.Notes, "fp only: compress: no verdict: the run has no compress")
}

// Each machine's row says where its host's effect was and what the VM did
// to it, from the CPU share and speed its records carry.
func TestMachineMechanism(t *testing.T) {
	var in []Input
	for _, name := range []string{"starved-crumbs", "speed-mechanism", "vm-speed-varied"} {
		l, err := results.Load(filepath.Join("..", "..", "testdata", "results", "constructed", name))
		require.NoError(t, err)
		in = append(in, Input{Label: name, Loaded: l})
	}
	c, err := Build(in)
	require.NoError(t, err)
	s := c.MachineSection()
	col := slices.Index(s.Header, "MECHANISM")
	require.GreaterOrEqual(t, col, 0, "the machines differ, so the column stays: %v", s.Header)
	assert.Equal(t, "host in CPU share, vm alike", s.Rows[0][col])
	assert.Equal(t, "host in speed, vm alike", s.Rows[1][col])
	// An inconclusive machine whose VM speed ratio's interval (0.33x..1.01x)
	// reaches past the bound: not "vm alike".
	assert.Equal(t, "host in CPU share, vm cannot tell", s.Rows[2][col])
	require.Len(t, c.Machines[0].Mechanism, 2)
	assert.Equal(t, "share", string(c.Machines[0].Mechanism[0].In), "the JSON carries the numbers behind it")
}

// A fleet at scale, 50 machines with 40-character host names that differ
// in CPU, OS, VM and mechanism, fits: every line of compare.md is under
// 160 characters, the machine columns written as keys listed once above
// the per-machine table, the runs named in full; in the terminal the runs
// are #1 ... #50, the legend naming each, and every line keeps within 100
// columns but a word wider than that (a long path), which stands whole on
// its line. The per-machine table there is as narrow as keys make it:
// every machine column keyed, what is left wrapped at its spaces.
func TestFiftyMachinesFit(t *testing.T) {
	c := constructedFleetWith(t, 50, testfleet.Options{NameWidth: 40, Varied: true})
	for _, col := range c.Columns {
		require.Len(t, col.Label, 40)
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "markdown", c))
	md := buf.String()
	for _, line := range strings.Split(md, "\n") {
		assert.Less(t, utf8.RuneCountInString(line), 160, "%q", line)
	}
	assert.Contains(t, md, "| RUN | CPU | OS | VM | VERDICT | SI | HOST 33/9 | VM 33/9 | MECHANISM |")
	assert.Contains(t, md, "| "+c.Columns[0].Label+" | C1 | O1 | ", "the runs named in full, the machine columns keyed")
	assert.Contains(t, md, "- CPU C1: "+c.Machines[0].CPU+"\n")
	assert.Equal(t, 1, strings.Count(md, "- CPU C2: "), "a key is said once")
	for _, m := range []*MachineVerdict{&c.Machines[0], &c.Machines[1]} {
		assert.Contains(t, md, ": "+m.OS+"\n", "every OS is listed")
	}

	buf.Reset()
	require.NoError(t, WriteCSV(&buf, c))
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, csvHeader(), recs[0], "the CSV's columns are an interface")
	assert.Equal(t, c.Columns[0].Label, recs[1][slices.Index(recs[0], "label")], "the CSV is never keyed")
	assert.Equal(t, c.Machines[0].CPU, recs[1][slices.Index(recs[0], "cpu")])

	var txt bytes.Buffer
	require.NoError(t, Write(&txt, "text", c))
	out := txt.String()
	assert.Contains(t, out, "\n- #1 "+c.Columns[0].Label+" (baseline):", "the legend names #1 in full")
	assert.Contains(t, out, "\n- #50 "+c.Columns[49].Label+":")
	assert.Equal(t, []string{"RUN", "CPU", "OS", "VM", "VERDICT", "SI", "HOST", "33/9", "VM", "33/9", "MECHANISM"}, strings.Fields(lineWith(t, out, "RUN  CPU")))
	assert.Regexp(t, `\n#50 +C\d +O\d +V\d +\S+ .* M\d\n`, out)
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(strings.TrimSpace(line), " ") {
			continue // one word, a long path, stands whole on its line to be copied
		}
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 100, "%q", line)
	}
	for _, title := range []string{"fp\n", "findings\n"} {
		table := out[strings.Index(out, "\n"+title)+1:]
		table = table[strings.Index(table, "\n\nTARGET  ")+2:]
		if title == "findings\n" {
			table = out[strings.Index(out, "\nFINDING ")+1:]
		}
		table = table[:strings.Index(table, "\n\n")]
		lines := strings.Split(table, "\n")
		assert.Greater(t, len(lines), 50, "%s: a row per run and cell", title)
		assert.Contains(t, table, "  #50  ")
	}
}

// A text format keys only what keeps a table from fitting: the machine
// column too wide (not the others, and never a "-"), and the runs only
// where their names are long; the HTML's section (MachineSection) is
// never keyed.
func TestFitKeysOnlyWhatIsTooWide(t *testing.T) {
	long := "Debian GNU/Linux 12 (bookworm), Linux 6.18.44-fc-v595 with a kernel built for a lab of many machines"
	for _, tc := range []struct {
		name        string
		markdown    bool
		labels      map[string]string
		keyed, runs bool
	}{
		{name: "markdown, short names", markdown: true, keyed: true},
		{name: "terminal, short names", keyed: true},
		{name: "terminal, long names", labels: map[string]string{"compare-a": strings.Repeat("a", 30)}, keyed: true, runs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			given := map[string]string{}
			for dir, l := range tc.labels {
				given[dir] = l
			}
			c := build(t, given)
			c.Layout = LayoutRows
			c.Machines[1].OS = long
			c.Machines[2].Mechanism = nil
			fitted := c.fit(tc.markdown)
			s := fitted.MachineSection()
			assert.Equal(t, tc.keyed, fitted.keyed["OS"], "%q", s.Header)
			assert.False(t, fitted.keyed["CPU"], "every run's CPU is said once above the table")
			assert.Equal(t, tc.runs, fitted.keyRuns)
			if tc.keyed {
				assert.Equal(t, []string{"OS O1: " + c.Machines[0].OS, "OS O2: " + long}, s.Keys[:2])
			}
			for _, k := range s.Keys {
				assert.False(t, strings.HasSuffix(k, ": -"), "a run with nothing to say has no key: %q", k)
			}
			if tc.runs {
				assert.Equal(t, "#1", s.Rows[0][0])
				assert.True(t, strings.HasPrefix(fitted.Legend()[0], "#1 "+strings.Repeat("a", 30)+" (baseline): "))
			} else {
				assert.Equal(t, c.Columns[0].Heading(), s.Rows[0][0])
			}
			assert.Empty(t, c.MachineSection().Keys, "the comparison itself is not changed")
		})
	}
}

// A run's verdict per machine is the run's own, caveats included: a run
// whose cells ran in sequence says so in the fleet view as in its summary,
// in every format, and a run without the caveat has none.
func TestMachineVerdictKeepsTheRunsCaveats(t *testing.T) {
	var in []Input
	for i, f := range []string{"compare-a", filepath.Join("constructed", "sequential")} {
		l, err := results.Load(filepath.Join("..", "..", "testdata", "results", f))
		require.NoError(t, err)
		in = append(in, Input{Label: []string{"interleaved", "sequential"}[i], Loaded: l})
	}
	c, err := Build(in)
	require.NoError(t, err)
	require.Len(t, c.Machines, 2)
	assert.Empty(t, c.Machines[0].Caveats, "compare-a's cells ran interleaved")
	own := summary.Of(in[1].Loaded).Verdicts
	require.Len(t, own, 1)
	require.NotEmpty(t, own[0].Caveats, "the sequential run's summary has its caveat")
	assert.Equal(t, own[0].Caveats, c.Machines[1].Caveats, "the row's caveats are the run's own")

	note := "sequential: caveat: " + own[0].Caveats[0]
	assert.Contains(t, c.MachineSection().Notes, note)
	for _, format := range []string{"table", "markdown", "json"} {
		var b bytes.Buffer
		require.NoError(t, Write(&b, format, c))
		assert.Contains(t, b.String(), "the cells ran in sequence (order: sequential)", format)
	}
}
