package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
)

// WriteMarkdown writes report.md: the HTML report's text, with the charts as
// links to the PNGs in plots/ (Write puts them there).
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	r.markdownHead(&b)
	r.markdownVerdict(&b)
	r.markdownCharts(&b)
	b.WriteString("## Summary\n")
	if len(r.Tables) == 0 {
		b.WriteString("\nNo cell finished.\n")
	}
	for _, t := range r.Tables {
		summary.WriteTableMarkdown(&b, t, "###")
	}
	r.markdownTelemetry(&b)
	r.markdownMachines(&b)
	fmt.Fprintf(&b, "\n## Spec\n\n%s\n\n```yaml\n%s```\n", r.SpecAgain(), r.SpecText())
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownHead is the title, the run's state and versions, and the
// platforms and contention it ran on.
func (r *Report) markdownHead(b *strings.Builder) {
	fmt.Fprintf(b, "# qoslab report: %s\n\n", md(r.Run.Name))
	fmt.Fprintf(b, "%s · qoslab %s · results schema %s · seed %d\n\n", md(r.Status()), md(r.Run.ToolVersion), r.Run.SchemaVersion, r.Run.Seed)
	if p := r.Summary.Partial; p != "" {
		fmt.Fprintf(b, "**%s.**\n\n", md(p))
	}
	fmt.Fprintf(b, "> %s\n\n", md(r.Platform()))
	if c := r.Contention(); c != "" {
		fmt.Fprintf(b, "> %s\n\n", md(c))
	}
}

// markdownVerdict is the verdicts with their warnings and rule, and the
// findings.
func (r *Report) markdownVerdict(b *strings.Builder) {
	b.WriteString("## Verdict\n\n")
	if len(r.Summary.Verdicts) == 0 {
		b.WriteString("No verdict: no workload ran on both the host and the VM.\n\n")
	}
	for i, v := range r.VerdictLines() {
		fmt.Fprintln(b, summary.Plain.MarkdownVerdict(r.Summary.Verdicts[i]))
		if v.Mechanism != "" {
			fmt.Fprintf(b, "  - **mechanism:** %s\n", md(v.Mechanism))
		}
		if v.OtherWork != "" {
			fmt.Fprintf(b, "  - **host:** %s\n", md(v.OtherWork))
		}
		for _, w := range v.Warnings {
			fmt.Fprintf(b, "  - **warning:** %s\n", md(w))
		}
		if v.Next != "" {
			fmt.Fprintf(b, "  - **next:** %s\n", md(v.Next))
		}
	}
	for _, w := range r.OtherWarnings() {
		fmt.Fprintf(b, "- **warning:** %s\n", md(w))
	}
	if len(r.Summary.Verdicts) > 0 {
		fmt.Fprintf(b, "\n%s\n\n", md(r.VerdictRule()))
	}

	if len(r.Summary.Findings) > 0 {
		b.WriteString("## Findings\n\n")
		for _, f := range r.Summary.Findings {
			fmt.Fprintf(b, "- %s\n", md(render.Finding(f)))
		}
		b.WriteString("\n")
	}
}

// markdownCharts links the charts as PNGs and says which were not drawn.
func (r *Report) markdownCharts(b *strings.Builder) {
	b.WriteString("## Charts\n\n")
	if len(r.Charts) == 0 {
		b.WriteString("No chart could be drawn from this run.\n\n")
	}
	for _, c := range r.Charts {
		fmt.Fprintf(b, "![%s](%s/%s.png)\n\n", md(c.Title), results.PlotsDir, c.Name)
	}
	if len(r.Skipped) > 0 {
		b.WriteString("Not drawn, for want of data:\n\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(b, "- %s: %s\n", s.Name, md(s.Reason))
		}
		b.WriteString("\n")
	}
}

// markdownTelemetry is the telemetry's notes and tables.
func (r *Report) markdownTelemetry(b *strings.Builder) {
	b.WriteString("\n## Telemetry\n\n")
	for _, n := range r.TelemetryNotes {
		fmt.Fprintf(b, "- %s\n", md(n))
	}
	if len(r.TelemetryNotes) > 0 {
		b.WriteString("\n")
	}
	if len(r.Summary.Telemetry) == 0 {
		b.WriteString("Telemetry was not recorded for this run.\n")
	} else {
		summary.WriteTelemetryMarkdown(b, r.Summary.Telemetry)
	}
}

// markdownMachines is each machine's Info, the run's notes and the notes
// about the data.
func (r *Report) markdownMachines(b *strings.Builder) {
	b.WriteString("\n## Machines\n")
	for _, m := range r.Machines() {
		fmt.Fprintf(b, "\n### %s\n\n| field | value |\n|---|---|\n", md(m.Target))
		for _, f := range m.Fields {
			fmt.Fprintf(b, "| %s | %s |\n", md(f.Key), md(f.Value))
		}
	}
	if len(r.Run.Notes) > 0 {
		b.WriteString("\n## Run notes\n\n")
		for _, n := range r.Run.Notes {
			fmt.Fprintf(b, "- %s\n", md(n))
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## About the data\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(b, "- %s\n", md(n))
		}
	}
}

func md(s string) string { return summary.MarkdownText(s) }
