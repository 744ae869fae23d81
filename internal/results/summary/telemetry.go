package summary

import (
	"fmt"
	"strings"

	"github.com/qoslab/qoslab/internal/telemetry"
)

// TelemetryRow is one cell run and view of telemetry, as text.
type TelemetryRow struct {
	Cell, View, Sampler string
	Repeat, Samples     int
	Types, Power        string
	Threads             string
	Notes               string
}

// TelemetryRows renders telemetry summaries as text, one row each;
// anything not read says "not measured".
func TelemetryRows(ss []telemetry.CellSummary) []TelemetryRow {
	var out []TelemetryRow
	for _, s := range ss {
		out = append(out, TelemetryRow{
			Cell: s.Cell, View: s.View, Sampler: s.Sampler, Repeat: s.Repeat, Samples: s.Samples,
			Types: typesText(s.Types), Power: powerText(s), Threads: threadsText(s.Threads), Notes: strings.Join(s.Notes, "; "),
		})
	}
	return out
}

func optText(v *float64, format string) string {
	if v == nil {
		return "not measured"
	}
	return fmt.Sprintf(format, *v)
}

func typesText(ts []telemetry.TypeSummary) string {
	var parts []string
	for _, t := range ts {
		name := t.Type
		if name == "" {
			name = "all"
		}
		parts = append(parts, fmt.Sprintf("%s (%d CPUs): busy %s, %s", name, t.CPUs, optText(pct(t.MeanBusy), "%.0f%%"), optText(t.MeanMHz, "%.0f MHz")))
	}
	return strings.Join(parts, "; ")
}

func pct(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return telemetry.Float(*v * 100)
}

func powerText(s telemetry.CellSummary) string {
	if s.PackageW == nil && s.CPUW == nil {
		return "not measured"
	}
	var parts []string
	if s.PackageW != nil {
		parts = append(parts, fmt.Sprintf("package %.2f W", *s.PackageW))
	}
	if s.CPUW != nil {
		parts = append(parts, fmt.Sprintf("CPU %.2f W", *s.CPUW))
	}
	return strings.Join(parts, ", ")
}

func threadsText(ts []telemetry.ThreadSummary) string {
	var parts []string
	for _, t := range ts {
		cpus := make([]string, len(t.CPUs))
		for i, c := range t.CPUs {
			cpus[i] = fmt.Sprint(c)
		}
		p := fmt.Sprintf("%s (tid %d): busy %s on CPUs %s", t.Role, t.TID, optText(pct(t.MeanBusy), "%.0f%%"), strings.Join(cpus, ","))
		if t.Policy != "" {
			p += ", " + t.Policy
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// WriteTelemetryMarkdown appends the telemetry table to b.
func WriteTelemetryMarkdown(b *strings.Builder, ss []telemetry.CellSummary) {
	b.WriteString("| cell | repeat | view | sampler | samples | cores (mean busy, mean frequency) | power | threads followed | notes |\n")
	b.WriteString("|---|--:|---|---|--:|---|---|---|---|\n")
	for _, t := range TelemetryRows(ss) {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %d | %s | %s | %s | %s |\n", mdText(t.Cell), t.Repeat, t.View, t.Sampler, t.Samples,
			mdText(t.Types), mdText(t.Power), mdText(t.Threads), mdText(t.Notes))
	}
}
