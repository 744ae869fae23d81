package render

import (
	"io"
	"strings"
)

// MarkdownWrapped writes d as Markdown does, with its prose (paragraphs
// and list items) wrapped at spaces into lines of at most width bytes, a
// list item's lines after the first indented under its text: a file that
// reads as text and in a diff, which a rendered page joins again. Tables,
// code and headings stay whole.
func MarkdownWrapped(w io.Writer, d Document, width int) error {
	var b strings.Builder
	for i, blk := range d.Blocks {
		if i > 0 {
			b.WriteString("\n")
		}
		wrappedBlock(&b, blk, width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func wrappedBlock(b *strings.Builder, blk Block, width int) {
	switch blk := blk.(type) {
	case *Paragraph:
		b.WriteString(WrapMarkdown(markdownSpans(blk.Spans), width, "") + "\n")
	case *List:
		wrappedItems(b, blk.Items, "", width)
	case *Fold:
		b.WriteString("<details>\n<summary>" + htmlEscape(blk.Title) + "</summary>\n")
		for _, inner := range blk.Blocks {
			b.WriteString("\n")
			wrappedBlock(b, inner, width)
		}
		b.WriteString("\n</details>\n")
	default:
		markdownBlock(b, blk)
	}
}

func wrappedItems(b *strings.Builder, items []Item, indent string, width int) {
	for _, it := range items {
		b.WriteString(WrapMarkdown(indent+"- "+markdownSpans(it.Spans), width, indent+"  ") + "\n")
		wrappedItems(b, it.Sub, indent+"  ", width)
	}
}

// WrapMarkdown breaks s at spaces into lines of at most width bytes (a
// word longer than that stands alone on its line), the lines after the
// first indented by indent, so that a Markdown paragraph or list item
// stays one. A word that would open a new block at the start of a line (a
// list's "-" or "1.", a quote's ">") stays on the line before. s's own
// indent, before its first word, is kept.
func WrapMarkdown(s string, width int, indent string) string {
	var lines []string
	line := s[:len(s)-len(strings.TrimLeft(s, " "))]
	first := true
	for _, word := range strings.Fields(s) {
		switch {
		case first:
			line += word
			first = false
		case len(line)+1+len(word) > width && !blockMarker(word):
			lines = append(lines, line)
			line = indent + word
		default:
			line += " " + word
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// blockMarker reports whether word, first on a line, could open a Markdown
// block: a list item, a quote, a heading, a rule or a table row.
func blockMarker(word string) bool {
	if strings.Trim(word, "-") == "" || strings.Trim(word, "=") == "" || strings.Trim(word, "#") == "" {
		return true
	}
	switch word {
	case "+", "*", ">", "|":
		return true
	}
	digits := strings.TrimRight(word[:len(word)-1], "0123456789")
	return digits == "" && len(word) > 1 && strings.ContainsAny(word[len(word)-1:], ".)")
}
