package render

import "strings"

const (
	// TrailingRoom is the narrowest a Trailing table's last column may be
	// beside the other columns; narrower, each row's last cell goes under
	// the row.
	TrailingRoom = 16
	// underIndent indents a last cell written under its row.
	underIndent = "    "
)

// trailingWidths are the widths of a Trailing table's columns but the
// last: each its widest cell, or heading where the heading is written.
func trailingWidths(t *Table) []int {
	widths := make([]int, max(len(t.Columns)-1, 0))
	for i := range widths {
		if !t.Headless {
			widths[i] = Width(t.Columns[i].Head)
		}
		for _, r := range t.Rows {
			if i < len(r) {
				widths[i] = max(widths[i], Width(r[i].Text))
			}
		}
	}
	return widths
}

// trailingOffset is where a Trailing table's last column starts: the
// other columns' widths, each with its gap.
func trailingOffset(t *Table) int {
	off := 0
	for _, w := range trailingWidths(t) {
		off += w + tableGap
	}
	return off
}

// trailing writes a Trailing table (Table): its heading unless Headless,
// then its rows, each with the columns but the last at their full widths
// and its last cell wrapped beside them, its continuations under it; where
// the last column would be narrower than TrailingRoom, or a word of the
// cell (a path) wider than it, the cell goes under its row, indented, and
// wraps there. A last cell breaks only between its words (a Keep span is
// one word).
func (t *textWriter) trailing(tb *Table) {
	widths := trailingWidths(tb)
	off := trailingOffset(tb)
	rows := tb.Rows
	if !tb.Headless {
		rows = append([][]Cell{headCells(tb)}, rows...)
	}
	for _, r := range rows {
		var lead strings.Builder
		for i, w := range widths {
			var c Cell
			if i < len(r) {
				c = r[i]
			}
			lead.WriteString(cellShown(c, t.colour) + strings.Repeat(" ", w+tableGap-Width(c.Text)))
		}
		var words []word
		if last := len(tb.Columns) - 1; last >= 0 && last < len(r) {
			words = cellWords(r[last])
		}
		head := strings.TrimRight(lead.String(), " ")
		switch {
		case len(words) == 0:
			t.b.WriteString(head + "\n")
		case besideFits(words, t.width-off):
			for i, l := range wrapWords(words, t.width-off, "", "") {
				if i == 0 {
					t.b.WriteString(lead.String() + l.shown(t.colour) + "\n")
				} else {
					t.b.WriteString(strings.Repeat(" ", off) + l.shown(t.colour) + "\n")
				}
			}
		default:
			if head != "" {
				t.b.WriteString(head + "\n")
			}
			t.lines(wrapWords(words, t.width, underIndent, underIndent))
		}
	}
}

// besideFits says whether a last cell of words wraps beside its row in
// room columns: room is TrailingRoom or more, and no word is wider.
func besideFits(words []word, room int) bool {
	if room < TrailingRoom {
		return false
	}
	for _, w := range words {
		if w.width() > room {
			return false
		}
	}
	return true
}

// cellShown is a cell on one line, in its tones' colours when colour is on.
func cellShown(c Cell, colour bool) string {
	if c.Spans == nil {
		return Paint(c.Text, c.Tone, colour)
	}
	var b strings.Builder
	for _, s := range c.Spans {
		b.WriteString(Paint(s.Text, s.Tone, colour))
	}
	return b.String()
}
