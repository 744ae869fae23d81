package render

import (
	"html"
	"io"
	"strconv"
	"strings"
)

// toneClass is the class an HTML element of tone t carries, for a page's
// style sheet to colour; "" for Plain.
var toneClass = map[Tone]string{Yes: "yes", No: "no", Inconclusive: "inconclusive", Warning: "warning", Note: "note"}

// HTML writes d as an HTML fragment, for a page that gives it its styles:
// headings as <hN>, prose as <p>, lists as <ul>, code as <pre><code>,
// tables in a <div class="table"> (which scrolls on its own, never the
// page) with numbers in <td class="num"> and a row in a tone (RowTones)
// in its tone's class, folds as <details>. A span or
// cell in a tone carries the tone's class (yes, no, inconclusive,
// warning, note); a Strong span is <strong>, a Code span <code>. Text is
// escaped.
func HTML(w io.Writer, d Document) error {
	var b strings.Builder
	for _, blk := range d.Blocks {
		htmlBlock(&b, blk)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func htmlBlock(b *strings.Builder, blk Block) {
	switch blk := blk.(type) {
	case *Heading:
		n := strconv.Itoa(min(max(blk.Level, 1), 6))
		b.WriteString("<h" + n + ">" + html.EscapeString(blk.Text) + "</h" + n + ">\n")
	case *Paragraph:
		b.WriteString("<p>" + htmlSpans(blk.Spans) + "</p>\n")
	case *Code:
		b.WriteString("<pre><code>" + html.EscapeString(strings.Join(blk.Lines, "\n")) + "</code></pre>\n")
	case *List:
		htmlItems(b, blk.Items)
	case *Table:
		htmlTable(b, blk)
	case *Fold:
		b.WriteString("<details><summary>" + html.EscapeString(blk.Title) + "</summary>\n")
		for _, inner := range blk.Blocks {
			htmlBlock(b, inner)
		}
		b.WriteString("</details>\n")
	}
}

// htmlSpans is spans as inline HTML.
func htmlSpans(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		text := html.EscapeString(s.Text)
		switch {
		case s.Code:
			text = "<code>" + text + "</code>"
		case s.Strong:
			text = "<strong>" + text + "</strong>"
		}
		if c := toneClass[s.Tone]; c != "" {
			text = `<span class="` + c + `">` + text + "</span>"
		}
		b.WriteString(text)
	}
	return b.String()
}

func htmlItems(b *strings.Builder, items []Item) {
	b.WriteString("<ul>\n")
	for _, it := range items {
		b.WriteString("<li>" + htmlSpans(it.Spans))
		if len(it.Sub) > 0 {
			b.WriteString("\n")
			htmlItems(b, it.Sub)
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n")
}

func htmlTable(b *strings.Builder, t *Table) {
	b.WriteString("<div class=\"table\"><table>\n<thead><tr>")
	for _, c := range t.Columns {
		b.WriteString("<th" + classAttr(c.Right, Plain) + ">" + html.EscapeString(c.LongHead()) + "</th>")
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for i, r := range t.Rows {
		b.WriteString("<tr" + rowClass(t, i) + ">")
		for j, c := range t.Columns {
			var cell Cell
			if j < len(r) {
				cell = r[j]
			}
			b.WriteString("<td" + classAttr(c.Right, cell.Tone) + ">" + html.EscapeString(cell.Text) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table></div>\n")
}

// rowClass is the class attribute of t's row i: its tone's class, where
// RowTones gives it one.
func rowClass(t *Table, i int) string {
	if i < len(t.RowTones) {
		if c := toneClass[t.RowTones[i]]; c != "" {
			return ` class="` + c + `"`
		}
	}
	return ""
}

// classAttr is the class attribute of a table's cell: num for a number,
// and its tone's class.
func classAttr(number bool, t Tone) string {
	var cs []string
	if number {
		cs = append(cs, "num")
	}
	if c := toneClass[t]; c != "" {
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return ""
	}
	return ` class="` + strings.Join(cs, " ") + `"`
}
