package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
)

// WriteMarkdown writes report.md: the report's document (headDocument,
// restDocument) as Markdown, the HTML report's text, with the charts
// between them as links to the PNGs in plots/ (Write puts them there).
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if err := render.Markdown(&b, r.headDocument()); err != nil {
		return err
	}
	b.WriteString("\n")
	r.markdownCharts(&b)
	if err := render.Markdown(&b, r.restDocument()); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownCharts links the charts as PNGs and says which were not drawn.
// An image has no block in the document model: this part of report.md is
// Markdown written here, its text escaped as render.Markdown escapes it.
func (r *Report) markdownCharts(b *strings.Builder) {
	b.WriteString("## Charts\n\n")
	if len(r.Charts) == 0 {
		b.WriteString("No chart could be drawn from this run.\n\n")
	}
	for _, c := range r.Charts {
		fmt.Fprintf(b, "![%s](%s/%s.png)\n\n", render.Escape(c.Title), results.PlotsDir, c.Name)
	}
	if len(r.Skipped) > 0 {
		b.WriteString("Not drawn, for want of data:\n\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(b, "- %s: %s\n", render.Escape(s.Name), render.Escape(s.Reason))
		}
		b.WriteString("\n")
	}
}
