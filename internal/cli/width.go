package cli

import (
	"io"
	"strings"
	"unicode/utf8"
)

// defaultWidth is the width a table or a help text fits where stdout is
// no terminal (a pipe, a file, a test): a 100-column terminal's, so what
// is kept or mailed reads as it did on one.
const defaultWidth = 100

// minWidth is the narrowest terminal whose width is taken as it is; below
// it (or unknown) text fits defaultWidth.
const minWidth = 40

// width is the columns Out's text fits: the terminal's when Out is one,
// else defaultWidth.
func (s *IOStreams) width() int {
	if s.Width >= minWidth {
		return s.Width
	}
	return defaultWidth
}

// colored says whether Out gets colour (a terminal, unless the environment
// asks for none; see colorStreams).
func (s *IOStreams) colored() bool { return s.Verdicts != 0 }

// word is one word of a cell: its text, which its width is counted from,
// and how it is shown (coloured, say), which is its text when empty.
type word struct{ text, shown string }

func (w word) String() string {
	if w.shown != "" {
		return w.shown
	}
	return w.text
}

// textWords are the words of plain text s.
func textWords(s string) []word {
	var ws []word
	for _, f := range strings.Fields(s) {
		ws = append(ws, word{text: f})
	}
	return ws
}

func textWidth(s string) int { return utf8.RuneCountInString(s) }

// wrapWords lays ws out in lines of at most width columns, breaking only
// between words: a word wider than width (a long path) stands alone on
// its line rather than be cut, so it can still be copied.
func wrapWords(ws []word, width int) []string {
	var lines []string
	var b strings.Builder
	n := 0
	for _, w := range ws {
		wl := textWidth(w.text)
		if n > 0 && n+1+wl > width {
			lines = append(lines, b.String())
			b.Reset()
			n = 0
		}
		if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w.String())
		n += wl
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, b.String())
	}
	return lines
}

// wrapText wraps each line of s longer than width at its spaces, its
// continuations indented as the line is, and leaves every other line (a
// hand-laid example, a list) as it is.
func wrapText(s string, width int) string {
	lines := strings.Split(s, "\n")
	var out []string
	for _, l := range lines {
		if textWidth(l) <= width {
			out = append(out, l)
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
		for _, part := range wrapWords(textWords(l), width-len(indent)) {
			out = append(out, indent+part)
		}
	}
	return strings.Join(out, "\n")
}

// tableRow is a row of a table fitTable writes: cells in columns, then
// last, the long cell (a detail, the verdicts), which wraps.
type tableRow struct {
	cells []word
	last  []word
}

const (
	// tableGap is the space between columns.
	tableGap = 2
	// minLast is the narrowest the last column may be beside the others;
	// narrower, a row's last cell goes under it.
	minLast = 16
	// underIndent indents a last cell written under its row.
	underIndent = 4
)

// columnWidths are the widths of rows' columns but the last.
func columnWidths(rows []tableRow) []int {
	var widths []int
	for _, r := range rows {
		for i, c := range r.cells {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], textWidth(c.text))
		}
	}
	return widths
}

// tableOffset is where the last column starts: the other columns' widths
// and their gaps.
func tableOffset(rows []tableRow) int {
	off := 0
	for _, w := range columnWidths(rows) {
		off += w + tableGap
	}
	return off
}

// fitTable writes rows to w as aligned columns that fit width: each row's
// last cell wraps within the last column, its continuations under it;
// where that column would be narrower than minLast, or a word of the cell
// wider than it, the cell goes under its row, indented, and wraps there.
func fitTable(w io.Writer, rows []tableRow, width int) error {
	widths := columnWidths(rows)
	off := tableOffset(rows)
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r.cells {
			line.WriteString(c.String())
			line.WriteString(strings.Repeat(" ", widths[i]+tableGap-textWidth(c.text)))
		}
		for i := len(r.cells); i < len(widths); i++ { // a row with fewer cells
			line.WriteString(strings.Repeat(" ", widths[i]+tableGap))
		}
		beside := width-off >= minLast
		for _, wd := range r.last {
			beside = beside && textWidth(wd.text) <= width-off
		}
		head := strings.TrimRight(line.String(), " ")
		switch {
		case len(r.last) == 0:
			b.WriteString(head + "\n")
		case beside:
			for i, l := range wrapWords(r.last, width-off) {
				if i == 0 {
					b.WriteString(line.String() + l + "\n")
				} else {
					b.WriteString(strings.Repeat(" ", off) + l + "\n")
				}
			}
		default:
			if head != "" {
				b.WriteString(head + "\n")
			}
			for _, l := range wrapWords(r.last, width-underIndent) {
				b.WriteString(strings.Repeat(" ", underIndent) + l + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
