package render

import (
	"io"
	"strings"
)

// Markdown writes d as Markdown (GitHub's): headings with "#", lists with
// "-", code fenced, tables as pipe tables with every column (a page
// scrolls where a terminal cannot), folds as <details>. Tones are not
// shown but in a span's emphasis (Strong); text is escaped so that it
// reads as written.
func Markdown(w io.Writer, d Document) error {
	var b strings.Builder
	for i, blk := range d.Blocks {
		if i > 0 {
			b.WriteString("\n")
		}
		markdownBlock(&b, blk)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func markdownBlock(b *strings.Builder, blk Block) {
	switch blk := blk.(type) {
	case *Heading:
		b.WriteString(strings.Repeat("#", max(blk.Level, 1)) + " " + Escape(blk.Text) + "\n")
	case *Paragraph:
		b.WriteString(markdownSpans(blk.Spans) + "\n")
	case *Code:
		b.WriteString("```" + blk.Lang + "\n" + strings.Join(blk.Lines, "\n") + "\n```\n")
	case *List:
		markdownItems(b, blk.Items, "")
	case *Table:
		markdownTable(b, blk)
	case *Fold:
		b.WriteString("<details>\n<summary>" + htmlEscape(blk.Title) + "</summary>\n")
		for _, inner := range blk.Blocks {
			b.WriteString("\n")
			markdownBlock(b, inner)
		}
		b.WriteString("\n</details>\n")
	}
}

// markdownSpans is spans as Markdown inline text: escaped, a Strong span
// in **, a Code span in backquotes, on one line.
func markdownSpans(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		switch {
		case s.Code:
			b.WriteString("`" + oneLine(s.Text) + "`")
		case s.Strong && strings.TrimSpace(s.Text) != "":
			lead := s.Text[:len(s.Text)-len(strings.TrimLeft(s.Text, " "))]
			trail := s.Text[len(strings.TrimRight(s.Text, " ")):]
			b.WriteString(lead + "**" + Escape(strings.TrimSpace(s.Text)) + "**" + trail)
		default:
			b.WriteString(Escape(s.Text))
		}
	}
	return b.String()
}

func markdownItems(b *strings.Builder, items []Item, indent string) {
	for _, it := range items {
		b.WriteString(indent + "- " + markdownSpans(it.Spans) + "\n")
		markdownItems(b, it.Sub, indent+"  ")
	}
}

func markdownTable(b *strings.Builder, t *Table) {
	head := make([]string, len(t.Columns))
	align := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = Escape(c.LongHead())
		align[i] = "---"
		if c.Right {
			align[i] = "--:"
		}
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Join(align, "|") + "|\n")
	for _, r := range t.Rows {
		cells := make([]string, len(t.Columns))
		for i := range cells {
			if i < len(r) {
				cells[i] = Escape(r[i].Text)
			}
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

// Escape keeps text as written in Markdown: inside a table's cell or a
// list item (no "|" or line break) and free of emphasis ("*", "_").
func Escape(s string) string {
	return strings.NewReplacer("\\", `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "\r\n", " ", "\n", " ").Replace(s)
}

func oneLine(s string) string { return strings.NewReplacer("\r\n", " ", "\n", " ").Replace(s) }

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
