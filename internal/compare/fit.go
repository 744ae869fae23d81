package compare

import (
	"slices"
	"unicode/utf8"

	"github.com/qoslab/qoslab/internal/render"
)

// The widths the text formats fit their tables to (fit): a Markdown
// table's rows under 160 characters, so that compare.md reads as text
// and in a diff; a terminal table's within 100 columns.
const (
	markdownTableWidth = 159
	textTableWidth     = 100
)

// shortRunName is the longest a run's name may be and still be worth its
// room: while every run's is this short, the tables name the runs in full
// however wide they are, since keys would save a few characters and cost
// the reader a look-up in the legend.
const shortRunName = 24

// fit is c as a text format (Markdown, or the terminal's) sets it out so
// that its tables keep within the format's width where they can: as it
// is when they do; else with the per-machine table's widest machine
// columns (CPU, OS, VM, mechanism) written as keys its Keys list, one by
// one until that table fits; and, where that leaves fewer tables too wide
// and a run's name is longer than shortRunName, with the runs named #1,
// #2, ... in every table, the legend naming each in full. A table that no key narrows enough (a column per run, asked
// for many runs) stays as wide as it is.
func (c *Comparison) fit(markdown bool) *Comparison {
	limit := textTableWidth
	if markdown {
		limit = markdownTableWidth
	}
	try := func(keyRuns bool) (*Comparison, int) {
		fitted := *c
		fitted.keyRuns, fitted.keyed = keyRuns, map[string]bool{}
		for {
			s := fitted.MachineSection()
			col := fitted.widestMachineColumn(s)
			if tableWidth(s.Header, s.Rows, markdown, 0) <= limit || col == "" {
				break
			}
			fitted.keyed[col] = true
		}
		return &fitted, fitted.overflow(markdown, limit)
	}
	plain, n := try(false)
	long := false
	for i := range len(c.Columns) + len(c.Missing) {
		long = long || utf8.RuneCountInString(c.runName(i)) > shortRunName
	}
	if n == 0 || !long {
		return plain
	}
	if keyed, m := try(true); m < n {
		return keyed
	}
	return plain
}

// widestMachineColumn is the heading of the machine column of s (the
// per-machine table) that is not yet keyed and takes the most room; ""
// when none is left.
func (c *Comparison) widestMachineColumn(s Section) string {
	widest, best := "", 0
	for _, f := range verdictFields {
		if f.key == "" || c.keyed[f.head("")] {
			continue
		}
		col := slices.Index(s.Header, f.head(""))
		if col < 0 {
			continue
		}
		w := 0
		for _, r := range s.Rows {
			w = max(w, utf8.RuneCountInString(r[col]))
		}
		if w > best {
			widest, best = f.head(""), w
		}
	}
	return widest
}

// overflow counts c's tables wider than limit in the format.
func (c *Comparison) overflow(markdown bool, limit int) int {
	s := c.MachineSection()
	widths := []int{tableWidth(s.Header, s.Rows, markdown, 0)}
	if len(c.Differences) > 0 {
		head, rows := c.DifferenceTable()
		switch {
		case markdown:
			widths = append(widths, tableWidth(head, rows, true, 0))
		case c.Rowwise():
			widths = append(widths, tableWidth(head, rows, false, 2))
		default: // "  key:\tvalues", no header
			keyed := make([][]string, len(rows))
			for i, r := range rows {
				keyed[i] = append([]string{r[0] + ":"}, r[1:]...)
			}
			widths = append(widths, tableWidth(nil, keyed, false, 2))
		}
	}
	for _, s := range c.Sections() {
		widths = append(widths, tableWidth(s.Header, s.Rows, markdown, 0))
	}
	n := 0
	for _, w := range widths {
		if w > limit {
			n++
		}
	}
	return n
}

// tableWidth is how wide the table's widest line is in characters: as a
// Markdown table, or as tabwriter aligns it (two spaces between columns,
// none after the last), after indent.
func tableWidth(head []string, rows [][]string, markdown bool, indent int) int {
	all := append([][]string{head}, rows...)
	if head == nil {
		all = rows
	}
	widest := 0
	if markdown {
		for _, r := range all {
			w := 4 + 3*(len(r)-1) // "| ", " | " between, " |"
			for _, cell := range r {
				w += utf8.RuneCountInString(render.Escape(cell))
			}
			widest = max(widest, w)
		}
		return widest
	}
	var cols []int
	for _, r := range all {
		for i, cell := range r {
			if i == len(cols) {
				cols = append(cols, 0)
			}
			cols[i] = max(cols[i], utf8.RuneCountInString(cell))
		}
	}
	for i, w := range cols {
		widest += w
		if i < len(cols)-1 {
			widest += 2
		}
	}
	return indent + widest
}
