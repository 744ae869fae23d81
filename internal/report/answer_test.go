package report

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reportHTML is the report.html of a testdata results directory.
func reportHTML(t *testing.T, name string) string {
	t.Helper()
	r, err := Load(filepath.Join("..", "..", "testdata", "results", name))
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, r.WriteHTML(&b))
	return b.String()
}

// inOrder asserts that every one of parts is in s, each after the one
// before it.
func inOrder(t *testing.T, s string, parts ...string) {
	t.Helper()
	at := -1
	for _, p := range parts {
		i := strings.Index(s, p)
		require.GreaterOrEqual(t, i, 0, "lacks %q", p)
		assert.Greater(t, i, at, "%q comes after %q", p, parts)
		at = i
	}
}

// The report opens with the answer: per verdict its outcome and what was
// found in plain words, its picture, the mechanism and, when it is not
// yes, the next step as a command; then where it ran, and only then the
// verdict in full with its statistics and the rule, folded.
func TestReportOpensWithTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		dir, outcome, found, next string
	}{
		{"constructed/capped", "inconclusive",
			"On the host, fp ran 300x faster at QoS 33 (user-interactive) than at QoS 9 (background). In the VM the ratio was 1.26x, but its uncertainty (1.1x..1.47x) reaches across the edge of the band 0.8x..1.25x",
			"<code>qoslab run --again ../../testdata/results/constructed/capped --max-repeats 24</code> lets the run add repeats up to 24 per cell, which would tell."},
		{"constructed/one-thread-count-outside", "no",
			"On the host, fp ran 300x faster at QoS 33 (user-interactive) than at QoS 9 (background). In the VM the higher class still ran faster: 1.61x at 4 threads (1.005x pooled over every thread count), beyond the band 0.8x..1.25x",
			"more repeats alone would not decide it (see why above); to run it again, with a new seed: <code>qoslab run --again ../../testdata/results/constructed/one-thread-count-outside</code>."},
		{"constructed/sequential", "yes", "On the host, fp ran 300x faster at QoS 33 (user-interactive) than at QoS 9 (background). In the VM the two classes ran alike: 1.0015x, inside the band 0.8x..1.25x", ""},
		{"constructed/interference", "yes", "On the host, fp ran 497x faster at QoS 33 (user-interactive) than at QoS 9 (background). In the VM the two classes ran alike: 0.988x, inside the band 0.8x..1.25x", ""},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			s := reportHTML(t, tc.dir)
			parts := []string{
				`<section class="answer ` + tc.outcome + `" id="answer-verdict-fp">`,
				`<span class="badge">` + tc.outcome + `</span>`,
				`<p class="found">` + htmlText(tc.found),
				`<figure id="chart-verdict-fp">`, "<svg",
				`<p class="mechanism"><strong>Mechanism:</strong> `,
			}
			if tc.next != "" {
				parts = append(parts, `<p class="next"><strong>Next step:</strong> `+tc.next+"</p>")
			}
			if tc.dir == "constructed/sequential" {
				parts = append(parts, `<p class="caveat"><strong>Caveat:</strong> the cells ran in sequence`)
			}
			parts = append(parts, "</section>", `<p class="platform">Measured on `,
				`<h2 id="verdict">The verdict in full</h2>`, `<li>fp: QoS subsumed in VM: <span class="`+tc.outcome+`">`+tc.outcome+"</span>",
				"<details><summary>The rule: how a verdict is decided</summary>", "SI = 1 - ln(vm ratio)/ln(host ratio)",
				"<h2>Summary</h2>")
			inOrder(t, s, parts...)
			if tc.next == "" {
				assert.NotContains(t, s, "Next step:", "a yes has no next step")
			}
			assert.Equal(t, 1, strings.Count(s, `id="chart-verdict-fp"`), "the picture once, with the answer")
		})
	}
}

// htmlText is s as html/template writes text: its apostrophes escaped.
func htmlText(s string) string { return strings.ReplaceAll(s, "'", "&#39;") }

// Every table longer than longTable rows is folded in a <details>, and
// every table is in a box of its own that scrolls (the page's div.wide, or
// render.HTML's div.table), so the page does not.
func TestLongTablesAreFolded(t *testing.T) {
	r, err := Load(fixtureDir(t, "linux-fixture", true))
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, r.WriteHTML(&b))
	s := b.String()
	require.Contains(t, s, "<details><summary>Telemetry per cell run (")
	long := 0
	for _, loc := range regexp.MustCompile(`(?s)<table>.*?</table>`).FindAllStringIndex(s, -1) {
		table := s[loc[0]:loc[1]]
		before := s[:loc[0]]
		assert.True(t, strings.HasSuffix(before, `<div class="wide">`) || strings.HasSuffix(before, `<div class="table">`), "a table in a box of its own: %.80s", table)
		if strings.Count(table, "<tr>")-1 <= longTable {
			continue
		}
		long++
		assert.Greater(t, strings.Count(before, "<details>"), strings.Count(before, "</details>"), "a long table is folded: %.200s", table)
	}
	assert.Positive(t, long, "the telemetry table is long")
}

// The compare report leads with the count of each answer, then a row per
// run coloured by its verdict, each run's next step, and says once what
// every run shares about its machines.
func TestComparisonLeadsWithTheCount(t *testing.T) {
	r := threeRuns(t)
	assert.Equal(t, []VerdictCount{{Runs: 3, Counts: []OutcomeCount{{"yes", 1, "yes"}, {"inconclusive", 2, "inconclusive"}}}}, r.VerdictCounts())
	var b strings.Builder
	require.NoError(t, r.WriteHTML(&b))
	s := b.String()
	inOrder(t, s,
		`<p class="count"><span class="badge yes">1 yes</span>, <span class="badge inconclusive">2 inconclusive</span> of 3 runs</p>`,
		"<h2>Verdict per machine</h2>",
		`<tr class="inconclusive"><td>first</td>`, `<tr class="inconclusive"><td>second</td>`, `<tr class="yes"><td>short</td>`,
		`<li>first, fp: <code>qoslab run --again ../../testdata/results/compare-a --repeats 12</code>`,
		`<p class="platform">Every run: Measured on host: linux/amd64, AMD EPYC`,
		`<figure class="fleet" id="chart-compare-fleet-fp">`,
		"<h2>Runs</h2>")
	assert.Equal(t, 3, strings.Count(s, `<tr class="`), "one coloured row per run")
	assert.Equal(t, 1, strings.Count(s, "Measured on host:"), "the machines every run shares, said once")
	assert.Equal(t, 1, strings.Count(s, "not Apple silicon results"))
	assert.NotContains(t, s, "<li>short, fp:", "a yes has no next step")
}

// Runs on different machines: what they share is said once, the rest per
// run, headed by the run.
func TestSharedSentences(t *testing.T) {
	shared, rest := sharedSentences([][]string{{"Measured on a.", "Not a Mac."}, {"Measured on b.", "Not a Mac."}, {"Not a Mac.", "Measured on a."}})
	assert.Equal(t, []string{"Not a Mac."}, shared)
	assert.Equal(t, [][]string{{"Measured on a."}, {"Measured on b."}, {"Measured on a."}}, rest)
}
