package compare

import (
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// markdownWidth is where Markdown's prose lines wrap (a rendered page
// joins them again); a table's rows cannot wrap.
const markdownWidth = 100

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
				w += utf8.RuneCountInString(mdEscape(cell))
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

// writeMarkdown writes the comparison as Markdown, fitted to its width
// (fit): compare.md.
func writeMarkdown(w io.Writer, c *Comparison) error {
	c = c.fit(true)
	var b strings.Builder
	writeMarkdownSection(&b, c.MachineSection())
	b.WriteString("Runs, the first the baseline:\n\n")
	for _, l := range c.Legend() {
		b.WriteString(wrapText("- "+mdEscape(l), markdownWidth, "  ") + "\n")
	}
	for _, n := range c.Notes {
		b.WriteString("\n" + wrapText("**Note:** "+mdEscape(n), markdownWidth, "") + "\n")
	}
	b.WriteString("\n" + wrapText(c.DifferenceText(), markdownWidth, "") + "\n\n")
	if len(c.Differences) > 0 {
		head, rows := c.DifferenceTable()
		writeMarkdownTable(&b, head, rows)
		b.WriteString("\n")
	}
	for _, s := range c.Sections() {
		writeMarkdownSection(&b, s)
	}
	for _, f := range c.Footer() {
		b.WriteString(wrapText("- "+mdEscape(f), markdownWidth, "  ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownSection writes a section as Markdown: its title as a
// heading, or, when that would run past markdownWidth, its name as the
// heading and what it shows in a paragraph; its lead, the table, and its
// notes as a list.
func writeMarkdownSection(b *strings.Builder, s Section) {
	if head := "### " + mdEscape(s.Title); len(head) <= markdownWidth {
		b.WriteString(head + "\n\n")
	} else {
		b.WriteString("### " + mdEscape(s.Name) + "\n\n" + wrapText(mdEscape(s.About)+".", markdownWidth, "") + "\n\n")
	}
	if s.Lead != "" {
		b.WriteString(wrapText(mdEscape(s.Lead), markdownWidth, "") + "\n\n")
	}
	for _, k := range s.Keys {
		b.WriteString(wrapText("- "+mdEscape(k), markdownWidth, "  ") + "\n")
	}
	if len(s.Keys) > 0 {
		b.WriteString("\n")
	}
	writeMarkdownTable(b, s.Header, s.Rows)
	b.WriteString("\n")
	for _, n := range s.Notes {
		b.WriteString(wrapText("- "+mdEscape(n), markdownWidth, "  ") + "\n")
	}
	if len(s.Notes) > 0 {
		b.WriteString("\n")
	}
}

// wrapText breaks s at spaces into lines of at most width bytes (a word
// longer than that stands alone on its line), the lines after the first
// indented by indent: a Markdown paragraph or list item stays one. A word
// that would start a new block at the start of a line (a list's "-" or
// "1.", a quote's ">") stays on the line before.
func wrapText(s string, width int, indent string) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
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

func writeMarkdownTable(b *strings.Builder, head []string, rows [][]string) {
	esc := func(cells []string) string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = mdEscape(c)
		}
		return "| " + strings.Join(out, " | ") + " |\n"
	}
	b.WriteString(esc(head))
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = "---"
	}
	b.WriteString("|" + strings.Join(sep, "|") + "|\n")
	for _, r := range rows {
		b.WriteString(esc(r))
	}
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`).Replace(s)
}
