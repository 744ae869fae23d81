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
// list item (no "|" or line break) and free of emphasis ("*", "_"). An
// "_" inside a word ("max_repeats", "CONFIG_UCLAMP_TASK") can neither open
// nor close emphasis (CommonMark's flanking rules), so it stays as it is,
// and a name reads as the program prints it.
func Escape(s string) string {
	s = strings.NewReplacer("\\", `\\`, "|", `\|`, "*", `\*`, "`", "\\`", "\r\n", " ", "\n", " ").Replace(s)
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && !insideWord(s, i) {
			b.WriteString(`\`)
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// insideWord says whether s[i] stands between two letters or digits.
func insideWord(s string, i int) bool {
	return i > 0 && i+1 < len(s) && wordByte(s[i-1]) && wordByte(s[i+1])
}

// wordByte says whether c is an ASCII letter or digit: an "_" between two
// of them is inside a word.
func wordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func oneLine(s string) string { return strings.NewReplacer("\r\n", " ", "\n", " ").Replace(s) }

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
