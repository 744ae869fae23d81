package summary

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
)

// runSamples is a small subsumption run: on the host QoS 33 runs three times
// as fast as QoS 9, in the VM both run alike; 1 and 2 threads, 6 repeats.
func runSamples() []results.Sample {
	var out []results.Sample
	for _, target := range []string{"host", "vm"} {
		for _, q := range []int{33, 9} {
			for _, threads := range []int{1, 2} {
				for rep := 1; rep <= 6; rep++ {
					rate := 1.4e8 * (1 + 0.01*float64(rep))
					if target == "host" && q == 9 {
						rate /= 3
					}
					for i := range threads {
						end := int64(2e9) + int64(i)*1e6
						out = append(out, results.Sample{Target: target, Workload: "fp", QoS: q, Threads: threads, Repeat: rep, Index: i,
							StartNs: 0, EndNs: end, Work: rate * float64(end) / 1e9, Unit: "loops", Rate: rate, QoSApplied: q, QoSFull: true})
					}
				}
			}
		}
	}
	// A host-only workload: no verdict for it.
	out = append(out, results.Sample{Target: "host", Workload: "compress", Phase: "compress", QoS: 33, Threads: 1, Repeat: 1,
		EndNs: 1e9, Work: 5e8, Unit: "bytes", Rate: 5e8, QoSApplied: 21, QoSReason: "uclamp unavailable | partial"})
	return out
}

// withEmptyCell adds a cell without finished repeats, whose statistics are NaN.
func withEmptyCell(a Summary) Summary {
	nan := analysis.OrderStatsOf(nil)
	a.Cells = append(a.Cells, analysis.Cell{CellKey: analysis.CellKey{Target: "vm", Workload: "mmul", QoS: 9, Threads: 4}, Unit: "mmul",
		TotalRate: nan, ThreadRate: nan, Seconds: nan})
	return a
}

func TestAnalyze(t *testing.T) {
	a := Analyze(runSamples(), "host", "vm")
	assert.Len(t, a.Cells, 9)
	assert.Len(t, a.Regressions, 5, "host and vm at two classes, and compress")
	require.Len(t, a.Verdicts, 1, "compress ran on the host only")
	assert.Equal(t, analysis.Subsumed, a.Verdicts[0].Outcome, render.VerdictText(a.Verdicts[0]))
	assert.Empty(t, Analyze(runSamples(), "host", "other").Verdicts)
}

func TestWriteCSV(t *testing.T) {
	a := withEmptyCell(Analyze(runSamples(), "host", "vm"))
	var buf bytes.Buffer
	require.NoError(t, writeCSV(&buf, a.Cells))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+len(a.Cells))
	assert.Equal(t, "target,workload,qos,threads,n,median,min,max,ci_low,ci_high,unit", strings.Join(rows[0][:11], ","))
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	require.Len(t, col, len(rows[0]), "column names are distinct")

	num := func(row []string, name string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(row[col[name]], 64)
		require.NoError(t, err, "%s=%q", name, row[col[name]])
		return v
	}
	for i, c := range a.Cells[:len(a.Cells)-1] {
		row := rows[i+1]
		assert.Equal(t, []string{c.Target, c.Workload, strconv.Itoa(c.QoS), strconv.Itoa(c.Threads), strconv.Itoa(c.TotalRate.N)}, row[:5])
		assert.Equal(t, float64(c.TotalRate.Median), num(row, "median"), "values are written exactly")
		assert.Equal(t, float64(c.TotalRate.Min), num(row, "min"))
		assert.Equal(t, float64(c.TotalRate.Max), num(row, "max"))
		assert.Equal(t, float64(c.TotalRate.CILow), num(row, "ci_low"))
		assert.Equal(t, float64(c.TotalRate.CIHigh), num(row, "ci_high"))
		assert.Equal(t, float64(c.ThreadRate.Median), num(row, "thread_median"))
		assert.Equal(t, float64(c.Seconds.Median), num(row, "seconds_median"))
		assert.Equal(t, c.Phase, row[col["phase"]])
		assert.Equal(t, c.Unit+"/s", row[col["unit"]])
	}
	find := func(target, workload, q, threads string) []string {
		t.Helper()
		for _, row := range rows[1:] {
			if row[0] == target && row[1] == workload && row[2] == q && row[3] == threads {
				return row
			}
		}
		t.Fatalf("no row %s %s %s %s", target, workload, q, threads)
		return nil
	}
	var order []string
	for _, row := range rows[1 : len(rows)-1] {
		order = append(order, strings.Join(row[:4], " "))
	}
	assert.Equal(t, []string{"host compress 33 1",
		"host fp 9 1", "host fp 9 2", "host fp 33 1", "host fp 33 2",
		"vm fp 9 1", "vm fp 9 2", "vm fp 33 1", "vm fp 33 2"}, order, "sorted by workload, target (host first), QoS, threads")
	host33 := find("host", "fp", "33", "1")
	assert.Equal(t, "6", host33[col["n"]])
	assert.InDelta(t, 0.96875, num(host33, "ci_confidence"), 1e-12, "6 repeats reach 96.9%")
	assert.Equal(t, "33", host33[col["qos_applied"]])

	compress := find("host", "compress", "33", "1")
	assert.Equal(t, "bytes/s", compress[col["unit"]])
	assert.Equal(t, "21", compress[col["qos_applied"]])
	assert.Equal(t, "1", compress[col["qos_partial"]])

	assert.Equal(t, "0", host33[col["idle"]])
	empty := rows[len(rows)-1]
	assert.Equal(t, "0", empty[col["n"]])
	for _, name := range []string{"median", "min", "max", "ci_low", "ci_high", "thread_median", "seconds_median"} {
		assert.Empty(t, empty[col[name]], "a NaN %s is an empty field", name)
	}
}

func TestWriteJSON(t *testing.T) {
	a := withEmptyCell(Analyze(runSamples(), "host", "vm"))
	a.Name = "subsumption"
	// An undecidable verdict: SI and p values are NaN.
	a.Verdicts = append(a.Verdicts, analysis.Subsumption(a.Cells, "compress", "compress", "host", "vm", analysis.DefaultMargins()))
	var buf bytes.Buffer
	require.NoError(t, writeJSON(&buf, a), "NaN must not fail the file")

	var doc struct {
		SchemaVersion string           `json:"schema_version"`
		Name          string           `json:"name"`
		Confidence    float64          `json:"confidence"`
		Cells         []map[string]any `json:"cells"`
		Regressions   []map[string]any `json:"regressions"`
		Verdicts      []map[string]any `json:"verdicts"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	assert.Equal(t, results.SchemaVersion, doc.SchemaVersion)
	assert.Equal(t, "subsumption", doc.Name)
	assert.Equal(t, 0.95, float64(doc.Confidence))
	require.Len(t, doc.Cells, len(a.Cells))

	first := doc.Cells[0]["total_rate"].(map[string]any)
	assert.Equal(t, float64(a.Cells[0].TotalRate.Median), first["median"])
	assert.Equal(t, "host", doc.Cells[0]["target"], "embedded CellKey fields are flattened")

	empty := doc.Cells[len(doc.Cells)-1]["total_rate"].(map[string]any)
	for _, k := range []string{"median", "min", "max", "ci_low", "ci_high", "ci_confidence"} {
		require.Contains(t, empty, k)
		assert.Nil(t, empty[k], "NaN %s is null", k)
	}
	assert.EqualValues(t, 0, empty["n"])

	var compressRegression map[string]any
	for _, r := range doc.Regressions {
		if r["workload"] == "compress" {
			compressRegression = r
		}
	}
	require.NotNil(t, compressRegression)
	assert.Equal(t, "compress", compressRegression["workload"])
	assert.Nil(t, compressRegression["b"], "one thread count: no line")

	require.Len(t, doc.Verdicts, 2)
	assert.Equal(t, "yes", doc.Verdicts[0]["outcome"])
	assert.NotNil(t, doc.Verdicts[0]["si"])
	assert.Equal(t, "inconclusive", doc.Verdicts[1]["outcome"])
	assert.Nil(t, doc.Verdicts[1]["si"])
	assert.Contains(t, buf.String(), "\n  \"cells\": [", "indented for people")

	buf.Reset()
	require.NoError(t, writeJSON(&buf, Summary{}))
	assert.Contains(t, buf.String(), `"cells": []`, "no cells is an empty list, not null")
}

func TestWriteMarkdown(t *testing.T) {
	a := withEmptyCell(Analyze(runSamples(), "host", "vm"))
	a.Name, a.Schema = "subsumption", "1.2"
	var buf bytes.Buffer
	require.NoError(t, WriteMarkdown(&buf, a))
	md := buf.String()

	assert.True(t, strings.HasPrefix(md, "# qoslab results: subsumption\n"), md)
	assert.Contains(t, md, "Result schema 1.2.", "the run's schema, not this binary's")
	if results.SchemaVersion != "1.2" {
		assert.NotContains(t, md, "Result schema "+results.SchemaVersion)
	}
	assert.Contains(t, md, "- fp: "+render.VerdictText(a.Verdicts[0])+"\n", "the verdict line, naming its workload")
	for _, r := range a.Regressions {
		if r.Workload == "fp" {
			assert.Contains(t, md, "- "+render.ClassRegression(r)+"\n", "two thread counts: no line")
		}
	}
	assert.Contains(t, md, "- Host QoS 33: no regression (needs rates at three or more thread counts")
	assert.Contains(t, md, "Total rate R (loops/s) on threads T")

	assert.Contains(t, md, "\n## fp\n")
	assert.Contains(t, md, "| target | QoS | threads | n | total rate median (M loops/s) | 95% CI (M loops/s) | min (M loops/s) | max (M loops/s) | max/min | CV | per-thread rate median (M loops/s) | CPU share median | speed median (loops/CPU-s) | time median (s) | QoS applied |")
	assert.Contains(t, md, "| host | 33 user-interactive | 1 | 6 | 144.9 | 141.4 – 148.4 | 141.4 | 148.4 | 1.05 | 1.8% | 144.9 | - | - | 2.000 | user-interactive |")
	assert.Contains(t, md, "\n## compress\n", "a phase named as its workload is not repeated")
	assert.Contains(t, md, "(MB/s)")
	assert.Contains(t, md, "| host | 33 user-interactive | 1 | 1 | 500.0 | 500.0 – 500.0 (0.0%) |", "coverage below 95% is shown")
	assert.Contains(t, md, "default (other class)", "threads that ran at another class are marked")
	assert.Contains(t, md, `uclamp unavailable \| partial`, "a | in text does not split the table")
	assert.Contains(t, md, "- Host QoS 33: no regression")
	assert.Contains(t, md, "| vm | 9 background | 4 | 0 | - | - | - | - | - | - | - | - | - | - | - |\n", "a cell without repeats shows dashes")

	for _, table := range strings.Split(md, "\n## ")[1:] {
		var widths []int
		for _, line := range strings.Split(table, "\n") {
			if strings.HasPrefix(line, "|") {
				widths = append(widths, strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"))
			}
		}
		for _, w := range widths {
			assert.Equal(t, widths[0], w, "every row has the header's columns")
		}
	}

	buf.Reset()
	require.NoError(t, WriteMarkdown(&buf, Summary{}))
	assert.Contains(t, buf.String(), "No cell finished.")
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Write(dir, Analyze(runSamples(), "host", "vm")))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{results.SummaryCSVFile, results.SummaryJSONFile, results.SummaryMDFile}, names)
	b, err := os.ReadFile(filepath.Join(dir, results.SummaryJSONFile))
	require.NoError(t, err)
	assert.True(t, json.Valid(b))

	err = Write(filepath.Join(dir, "missing"), Summary{})
	assert.ErrorContains(t, err, filepath.Join(dir, "missing", results.SummaryJSONFile))
}

func TestSig(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{149.04, "149.0"}, {1.23456, "1.235"}, {0.0123456, "0.01235"}, {12345.6, "12346"}, {0, "0"}, {-2.5, "-2.500"}, {math.NaN(), "-"}, {math.Inf(1), "-"},
	} {
		assert.Equal(t, tc.want, sig(tc.x), "%v", tc.x)
	}
}

// A cell whose repeats disagree is flagged beside its workload's verdict in
// the terminal and summary.md, listed in summary.json and marked in
// summary.csv; the cells that agree are not.
func TestDisagreeingRepeatsAreFlaggedEverywhere(t *testing.T) {
	var samples []results.Sample
	add := func(target string, q, rep int, rate float64) {
		samples = append(samples, results.Sample{Target: target, Workload: "fp", QoS: q, Threads: 1, Repeat: rep, Unit: "loops",
			StartNs: 0, EndNs: 1e9, Work: rate, Rate: rate, QoSApplied: q, QoSFull: true})
	}
	for i, bg := range []float64{1.6e6, 527e6, 1.7e6, 1.5e6, 1.6e6, 1.65e6} {
		add("host", 9, i+1, bg)
		add("host", 33, i+1, 300e6+float64(i))
		add("vm", 9, i+1, 12e6+float64(i))
		add("vm", 33, i+1, 12e6-float64(i))
	}
	a := Analyze(samples, "host", "vm")
	want := "host fp qos=9 threads=1: repeats range 1.5M..527M loops/s (351x apart): the records carry no CPU time (a run written before results schema 1.2), so whether the threads lost CPU share or speed cannot be told"

	var term bytes.Buffer
	WriteTerminal(&term, a)
	items := glanceItems(term.String())
	verdictAt := slices.IndexFunc(items, func(l string) bool { return strings.HasPrefix(l, "- fp: QoS subsumed in VM") })
	require.GreaterOrEqual(t, verdictAt, 0, term.String())
	require.Greater(t, len(items), verdictAt+2)
	assert.True(t, strings.HasPrefix(items[verdictAt+1], "  - mechanism: "), "the mechanism line is under the verdict")
	assert.Equal(t, "  - warning: "+want, items[verdictAt+2], "the warning follows its verdict")
	assert.Equal(t, 1, strings.Count(term.String(), "warning:"), "only the disagreeing cell")

	var md strings.Builder
	require.NoError(t, WriteMarkdown(&md, a))
	assert.Contains(t, md.String(), "  - **warning:** "+render.Escape(want))
	assert.Contains(t, md.String(), "| 351 ! |")

	var js bytes.Buffer
	require.NoError(t, writeJSON(&js, a))
	var doc struct {
		Warnings []string `json:"warnings"`
		Cells    []struct {
			analysis.CellKey
			Dispersion struct {
				CV     *float64 `json:"cv"`
				MaxMin *float64 `json:"max_min"`
				Flag   string   `json:"flag"`
			} `json:"dispersion"`
		} `json:"cells"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	assert.Equal(t, []string{want}, doc.Warnings)
	flagged := 0
	for _, c := range doc.Cells {
		require.NotNil(t, c.Dispersion.MaxMin)
		if c.Dispersion.Flag != "" {
			flagged++
			assert.Equal(t, analysis.CellKey{Target: "host", Workload: "fp", QoS: 9, Threads: 1}, c.CellKey)
		}
	}
	assert.Equal(t, 1, flagged)

	var csvOut bytes.Buffer
	require.NoError(t, writeCSV(&csvOut, a.Cells))
	rows, err := csv.NewReader(&csvOut).ReadAll()
	require.NoError(t, err)
	h := rows[0]
	flagCol, mmCol := slices.Index(h, "flag"), slices.Index(h, "max_min")
	require.Positive(t, flagCol)
	for _, r := range rows[1:] {
		if r[0] == "host" && r[2] == "9" {
			assert.Equal(t, "repeats range 1.5M..527M loops/s (351x apart)", r[flagCol])
			assert.True(t, strings.HasPrefix(r[mmCol], "351.33"), r[mmCol])
		} else {
			assert.Empty(t, r[flagCol])
		}
	}
}

// With three thread counts the regression is printed as [game] prints it,
// with its R², and the Theil-Sen slope with its interval.
func TestRegressionLinesWithThreeThreadCounts(t *testing.T) {
	var samples []results.Sample
	for _, threads := range []int{1, 2, 4} {
		for rep := 1; rep <= 3; rep++ {
			rate := 1e8 * float64(threads) * (1 + 0.01*float64(rep))
			samples = append(samples, results.Sample{Target: "host", Workload: "fp", QoS: 33, Threads: threads, Repeat: rep,
				StartNs: 0, EndNs: 1e9, Work: rate, Unit: "loops", Rate: rate, QoSApplied: 33, QoSFull: true})
		}
	}
	a := Analyze(samples, "host", "vm")
	require.Len(t, a.Regressions, 1)
	r := a.Regressions[0]
	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, a))
	assert.Contains(t, md.String(), "- "+render.ClassRegression(r)+fmt.Sprintf(" (R² %.3f, 9 points)", r.R2))
	assert.Contains(t, md.String(), "- Host QoS 33: R = (")
	assert.Contains(t, md.String(), "(Theil-Sen, 95%)")
	var term bytes.Buffer
	WriteTerminal(&term, a)
	assert.Contains(t, term.String(), "fp Host QoS 33: R = (")
}

// The terminal's compression lines give the CV and max/min of the times;
// a compression cell whose times disagree is warned about in seconds, under
// the workloads without a verdict (it ran on the host only).
func TestTerminalCompressionTimesDispersion(t *testing.T) {
	var samples []results.Sample
	for i, secs := range []float64{2.0, 2.1, 1.9, 2.0, 2.05, 1.95} {
		samples = append(samples, results.Sample{Target: "host", Workload: "compress", Phase: "compress", QoS: 9, Threads: 1, Repeat: i + 1,
			EndNs: int64(secs * 1e9), Work: 1e9, Unit: "bytes", Rate: 1e9 / secs, QoSApplied: 9, QoSFull: true})
	}
	for i, secs := range []float64{2.0, 9.0, 2.1, 2.0, 2.05, 1.95} {
		samples = append(samples, results.Sample{Target: "host", Workload: "compress", Phase: "compress", QoS: 33, Threads: 1, Repeat: i + 1,
			EndNs: int64(secs * 1e9), Work: 1e9, Unit: "bytes", Rate: 1e9 / secs, QoSApplied: 33, QoSFull: true})
	}
	var term bytes.Buffer
	WriteTerminal(&term, Analyze(samples, "host", "vm"))
	items := glanceItems(term.String())
	// sd of 2.0 2.1 1.9 2.0 2.05 1.95 is sqrt(0.025/5) = 0.0707: 3.5% of 2.0.
	assert.Contains(t, items, "- host compress qos 9 threads 1: 2.00 s median [1.90..2.10], n=6, cv 3.5%, max/min 1.11")
	// mean 19.1/6 = 3.183, sum of squares 40.61, sd sqrt(40.61/5) = 2.850: 89.5%.
	assert.Contains(t, items, "- host compress qos 33 threads 1: 2.02 s median [1.95..9.00], n=6, cv 89.5%, max/min 4.62 !")
	assert.Equal(t, "- warning: host compress qos=33 threads=1: repeats range 1.95..9 s (4.62x apart): the records carry no CPU time (a run written before results schema 1.2), so whether the threads lost CPU share or speed cannot be told", items[len(items)-1])
	assert.Equal(t, 1, strings.Count(term.String(), "warning:"))
}

// With two thread counts no series gets a line, and the terminal says so
// once per workload rather than once per series.
func TestTerminalSaysOnceWhenNoRegressionFits(t *testing.T) {
	var term bytes.Buffer
	WriteTerminal(&term, Analyze(runSamples(), "host", "vm"))
	assert.Equal(t, 1, strings.Count(term.String(), "fp: no regression lines (2 thread counts; a line needs 3 or more)\n"), term.String())
	assert.NotContains(t, term.String(), "Host QoS 9: no regression")
}

// A straggler in a fixed-work cell is stated in the terminal, summary.md
// and summary.json; the same threads in a fixed-duration cell (all end at
// the deadline by design) are not.
func TestFindingsInEverySummary(t *testing.T) {
	var samples []results.Sample
	for i, e := range []float64{2.03, 2.03, 3.42} {
		samples = append(samples, results.Sample{Target: "host", Workload: "mmul", QoS: 33, Threads: 3, Repeat: 1, Index: i,
			EndNs: int64(e * 1e9), Work: 1e7, Rate: 1e7 / e, Unit: "mmul", QoSApplied: 33, QoSFull: true})
	}
	a := Analyze(samples, "host", "vm")
	want := "host mmul qos=33 threads=3: in 1 of 1 repeats one thread finished 1.39 s (68%) after the other two"
	require.Len(t, a.Findings, 1)
	assert.Equal(t, want, render.Finding(a.Findings[0]))
	var term bytes.Buffer
	WriteTerminal(&term, a)
	assert.Contains(t, glanceItems(term.String()), "- finding: "+want)
	var md strings.Builder
	require.NoError(t, WriteMarkdown(&md, a))
	assert.Contains(t, md.String(), "## Findings\n\n- "+render.Escape(want)+"\n")
	var js bytes.Buffer
	require.NoError(t, writeJSON(&js, a))
	assert.Contains(t, js.String(), `"kind": "stragglers"`)

	for i := range samples {
		samples[i].DurationNs = 2e9
	}
	assert.Empty(t, Analyze(samples, "host", "vm").Findings, "a duration cell's end times are its deadline")
}

// A workload run at one class on both targets (the allocation and pi
// experiments) gets no verdict: it asks nothing about QoS.
func TestNoVerdictForOneClass(t *testing.T) {
	var samples []results.Sample
	for _, target := range []string{"host", "vm"} {
		for rep := 1; rep <= 3; rep++ {
			samples = append(samples, results.Sample{Target: target, Workload: "mmul", QoS: 33, Threads: 1, Repeat: rep,
				EndNs: 1e9, Work: 1e5, Rate: 1e5, Unit: "mmul", QoSApplied: 33, QoSFull: true})
		}
	}
	a := Analyze(samples, "host", "vm")
	assert.Empty(t, a.Verdicts)
	assert.Len(t, a.Cells, 2)
}

// The scaling finding carries the rate each added thread brings, where a
// regression line fits (3+ thread counts), and calls no count best that 3
// repeats a count cannot show best.
func TestScalingFindingCarriesTheSlope(t *testing.T) {
	var samples []results.Sample
	for _, n := range []int{1, 2, 4} {
		for rep := 1; rep <= 3; rep++ {
			rate := 1e8 * float64(n) * (1 + 0.01*float64(rep))
			for i := range n {
				samples = append(samples, results.Sample{Target: "host", Workload: "fp", QoS: 33, Threads: n, Repeat: rep, Index: i,
					EndNs: 1e9, Work: rate / float64(n), Rate: rate / float64(n), Unit: "loops", QoSApplied: 33, QoSFull: true})
			}
		}
	}
	a := Analyze(samples, "host", "vm")
	var scaling []string
	for _, f := range a.Findings {
		if f.Kind == "scaling" {
			scaling = append(scaling, render.FindingText(f))
		}
	}
	require.Len(t, scaling, 1)
	assert.Contains(t, scaling[0], "highest median at 4 threads (4.08e+08 loops/s); too few repeats to test it against 1, 2 threads", "3 repeats a count cannot show it best")
	assert.Contains(t, scaling[0], "each added thread brought 1.02e+08 loops/s [1e+08..1.04e+08] (Theil-Sen)")
}

// runOf is a run whose run.json's spec is raw ("" for none).
func runOf(t *testing.T, raw string) results.Run {
	t.Helper()
	if raw == "" {
		return results.Run{}
	}
	s, err := results.DecodeSpec(json.RawMessage(raw))
	require.NoError(t, err)
	return results.Run{Spec: s}
}

// The verdict takes the margins a run's spec set, the defaults where it
// set none (and for runs recorded before specs had them).
func TestMarginsOf(t *testing.T) {
	cases := []struct {
		name string
		spec string
		want analysis.Margins
	}{
		{"set", `{"verdict": {"relative_margin": 0.2, "absolute_margin": 1.5}}`, analysis.Margins{Relative: 0.2, Absolute: 1.5}},
		{"one set", `{"verdict": {"absolute_margin": 2}}`, analysis.Margins{Relative: 0.1, Absolute: 2}},
		{"older run", `{"name": "x"}`, analysis.DefaultMargins()},
		{"zero values", `{"verdict": {"relative_margin": 0, "absolute_margin": 0}}`, analysis.DefaultMargins()},
		{"no spec", ``, analysis.DefaultMargins()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, MarginsOf(runOf(t, c.spec)))
		})
	}
}

func TestScheduleOf(t *testing.T) {
	for _, c := range []struct {
		name string
		spec string
		want []int
	}{
		{"three times the repeats", `{"repeats": 6, "max_repeats": 18}`, []int{6, 12, 18}},
		{"a cap between blocks", `{"repeats": 6, "max_repeats": 15}`, []int{6, 12, 15}},
		{"turned off", `{"repeats": 6, "max_repeats": 0}`, nil},
		{"older run: one look", `{"repeats": 6}`, nil},
		{"no spec", ``, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, ScheduleOf(runOf(t, c.spec)))
		})
	}
}

func TestQoSNotesLeaveNoMarkWithoutItsLegend(t *testing.T) {
	cell := func(target string, asked int, applied []int, partial int, reasons ...string) analysis.Cell {
		c := analysis.Cell{CellKey: analysis.CellKey{Target: target, Workload: "fp", QoS: asked, Threads: 1}}
		c.QoSApplied, c.QoSPartial, c.QoSReasons = applied, partial, reasons
		return c
	}
	notes := QoSNotes([]analysis.Cell{
		cell("vm", 9, []int{9}, 1, "uclamp unavailable"),
		cell("host", 33, []int{21}, 0),
		cell("host", 9, []int{9}, 0),
	})
	assert.Equal(t, []string{
		"host user-interactive: the agent gave no reason",
		"vm background: uclamp unavailable",
	}, notes)
}

// A run whose cells ran in sequence confounds time and class: every
// verdict of it says so, and one of an interleaved run does not.
func TestSequentialRunCaveat(t *testing.T) {
	var samples []results.Sample
	for rep := 1; rep <= 6; rep++ {
		for _, c := range []struct {
			target string
			q      int
			rate   float64
		}{{"host", 9, 1e6}, {"host", 33, 3e8}, {"vm", 9, 1e7}, {"vm", 33, 1e7}} {
			r := c.rate * (1 + 0.01*float64(rep))
			samples = append(samples, results.Sample{Target: c.target, Workload: "fp", QoS: c.q, Threads: 1, Repeat: rep, Unit: "loops",
				EndNs: 1e9, Work: r, Rate: r, QoSApplied: c.q, QoSFull: true})
		}
	}
	for order, want := range map[string]bool{"sequential": true, "interleaved": false} {
		l := &results.Loaded{Dir: &results.Dir{Run: runOf(t, `{"order":"`+order+`"}`)}, Samples: samples}
		a := Of(l)
		require.Len(t, a.Verdicts, 1)
		v := a.Verdicts[0]
		if want {
			assert.Equal(t, []string{sequentialCaveat}, v.Caveats)
			assert.Contains(t, render.VerdictText(v), "; caveat: the cells ran in sequence (order: sequential), so time and class are confounded")
		} else {
			assert.Empty(t, v.Caveats, order)
			assert.NotContains(t, render.VerdictText(v), "caveat")
		}
	}
}

// glanceItems are the list items of WriteTerminal's output, each with its
// wrapped lines joined again: "- x", "  - y" (blank lines dropped).
func glanceItems(out string) []string {
	var items []string
	for _, l := range strings.Split(out, "\n") {
		body := strings.TrimLeft(l, " ")
		switch {
		case body == "":
		case strings.HasPrefix(body, "- ") || len(items) == 0:
			items = append(items, l)
		default:
			items[len(items)-1] += " " + body
		}
	}
	return items
}

// WriteTerminal fits the run's summary to TerminalWidth.
func TestWriteTerminalFits(t *testing.T) {
	for _, d := range testdataDirs(t) {
		l, err := results.Load(d)
		if err != nil {
			continue
		}
		var term bytes.Buffer
		WriteTerminal(&term, Of(l))
		for _, line := range strings.Split(term.String(), "\n") {
			if render.Width(line) > TerminalWidth && strings.Contains(strings.TrimSpace(line), " ") {
				t.Errorf("%s: a line of %d columns: %q", d, render.Width(line), line)
			}
		}
	}
}
