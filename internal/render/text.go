package render

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/qoslab/qoslab/internal/termcolor"
)

// toneColor is each tone's colour on a terminal; Plain and Note have none.
var toneColor = map[Tone]string{
	Yes:          termcolor.Green,
	No:           termcolor.Red,
	Inconclusive: termcolor.Yellow,
	Warning:      termcolor.Yellow,
}

// Paint is s in tone t's colour when colour is on (a terminal), else s.
func Paint(s string, t Tone, colour bool) string {
	if c, ok := toneColor[t]; ok && colour && s != "" {
		return termcolor.Paint(c, s)
	}
	return s
}

// Width is how many columns s takes on a terminal, counted in runes.
func Width(s string) int { return utf8.RuneCountInString(s) }

// textWriter writes a document as a terminal shows it.
type textWriter struct {
	b      strings.Builder
	width  int
	colour bool
}

// Text writes d as plain text that fits width columns: paragraphs and
// list items wrap at their spaces (a word wider than the width, a path,
// stands alone on its line, uncut), tables leave out and wrap columns to
// fit (Table), code lines break at a space with a trailing " \". With
// colour, each span and cell is shown in its tone's colour.
func Text(w io.Writer, d Document, width int, colour bool) error {
	t := &textWriter{width: max(width, 20), colour: colour}
	for i, b := range d.Blocks {
		if i > 0 {
			t.b.WriteString("\n")
		}
		t.block(b)
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

func (t *textWriter) block(b Block) {
	switch b := b.(type) {
	case *Heading:
		t.heading(b.Level, b.Text)
	case *Paragraph:
		t.lines(wrapSpans(b.Spans, t.width, "", ""))
	case *Code:
		t.code(b.Lines)
	case *List:
		t.items(b.Items, "")
	case *Table:
		t.table(b)
	case *Fold:
		t.heading(3, b.Title)
		for _, inner := range b.Blocks {
			t.b.WriteString("\n")
			t.block(inner)
		}
	}
}

// heading writes a heading's text, underlined with "=" at level 1 and "-"
// at level 2, as wide as its longest line (at most the width).
func (t *textWriter) heading(level int, text string) {
	lines := wrapSpans([]Span{Words(text)}, t.width, "", "")
	long := 0
	for _, l := range lines {
		t.b.WriteString(l.plain + "\n")
		long = max(long, min(Width(l.plain), t.width))
	}
	switch level {
	case 1:
		t.b.WriteString(strings.Repeat("=", long) + "\n")
	case 2:
		t.b.WriteString(strings.Repeat("-", long) + "\n")
	}
}

// lines writes wrapped lines, their words in their tones' colours when
// colour is on.
func (t *textWriter) lines(ls []line) {
	for _, l := range ls {
		t.b.WriteString(l.shown(t.colour) + "\n")
	}
}

// items writes list items, "- " before each, its continuations and the
// items under it indented two more.
func (t *textWriter) items(items []Item, indent string) {
	for _, it := range items {
		t.lines(wrapSpans(it.Spans, t.width, indent+"- ", indent+"  "))
		t.items(it.Sub, indent+"  ")
	}
}

// code writes code lines indented two, each longer than the width broken
// at its spaces with " \" at the end of every line but its last, as a
// shell continues a command.
func (t *textWriter) code(lines []string) {
	for _, l := range lines {
		words := strings.Fields(l)
		cur := "  "
		for i, w := range words {
			room := t.width - 2 // for the " \\" of a line that goes on
			if i == len(words)-1 {
				room = t.width
			}
			switch {
			case i == 0:
				cur += w
			case Width(cur)+1+Width(w) > room:
				t.b.WriteString(cur + " \\\n")
				cur = "      " + w
			default:
				cur += " " + w
			}
		}
		t.b.WriteString(cur + "\n")
	}
}

// seg is a run of a word in one tone.
type seg struct {
	text string
	tone Tone
}

// word is a word of a paragraph: what lies between two spaces, in one
// tone or more ("yes:" may be "yes" green and ":" plain).
type word []seg

func (w word) width() int {
	n := 0
	for _, s := range w {
		n += Width(s.text)
	}
	return n
}

func (w word) plain() string {
	var b strings.Builder
	for _, s := range w {
		b.WriteString(s.text)
	}
	return b.String()
}

func (w word) shown(colour bool) string {
	var b strings.Builder
	for _, s := range w {
		b.WriteString(Paint(s.text, s.tone, colour))
	}
	return b.String()
}

// line is one wrapped line: its words after its lead.
type line struct {
	lead  string
	words []word
	plain string
}

// shown is the line with each word in its tones' colours when colour is
// on.
func (l line) shown(colour bool) string {
	if !colour {
		return l.plain
	}
	parts := make([]string, len(l.words))
	for i, w := range l.words {
		parts[i] = w.shown(true)
	}
	return l.lead + strings.Join(parts, " ")
}

// spanWords splits spans into words, each run of a word in its span's
// tone; a code span is set in backquotes; a Keep span's spaces are its
// word's, not breaks.
func spanWords(spans []Span) []word {
	var out []word
	var cur word
	for _, s := range spans {
		text := s.Text
		if s.Code && text != "" {
			text = "`" + text + "`"
		}
		for _, r := range text {
			if (r == ' ' || r == '\t' || r == '\n') && !s.Keep {
				if len(cur) > 0 {
					out = append(out, cur)
					cur = nil
				}
				continue
			}
			if n := len(cur); n > 0 && cur[n-1].tone == s.Tone {
				cur[n-1].text += string(r)
			} else {
				cur = append(cur, seg{text: string(r), tone: s.Tone})
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// wrapSpans lays spans out in lines of at most width columns: the first
// after first, the others after rest, breaking only between words (a
// word wider than the width stands alone on its line).
func wrapSpans(spans []Span, width int, first, rest string) []line {
	return wrapWords(spanWords(spans), width, first, rest)
}

func wrapWords(words []word, width int, first, rest string) []line {
	var out []line
	cur := line{lead: first}
	n := Width(first)
	flush := func() {
		parts := make([]string, len(cur.words))
		for i, w := range cur.words {
			parts[i] = w.plain()
		}
		cur.plain = cur.lead + strings.Join(parts, " ")
		out = append(out, cur)
	}
	for _, w := range words {
		wl := w.width()
		if len(cur.words) > 0 && n+1+wl > width {
			flush()
			cur = line{lead: rest}
			n = Width(rest)
		}
		if len(cur.words) > 0 {
			n++
		}
		cur.words = append(cur.words, w)
		n += wl
	}
	flush()
	return out
}

// tableGap is the space between a table's columns.
const tableGap = 2

// cellWords are a cell's words, in its tone, or its spans' words where it
// has spans.
func cellWords(c Cell) []word {
	if c.Spans != nil {
		return spanWords(c.Spans)
	}
	return spanWords([]Span{{Text: c.Text, Tone: c.Tone}})
}

// layout is how a table is set out at a width: the columns kept (by
// index) and each one's width; none when only a row per record fits.
type layout struct {
	keep   []int
	widths []int
}

func (l layout) total() int {
	n := tableGap * max(len(l.widths)-1, 0)
	for _, w := range l.widths {
		n += w
	}
	return n
}

// columnSizes are a column's widths: full, its widest cell or heading;
// narrow, its heading wrapped to its longest word; least, where it may
// wrap, its longest word, else narrow.
type columnSizes struct{ full, narrow, least int }

func sizesOf(t *Table, i int) columnSizes {
	var s columnSizes
	cells := 0
	for _, r := range t.Rows {
		if i >= len(r) {
			continue
		}
		cells = max(cells, Width(r[i].Text))
		for _, w := range cellWords(r[i]) {
			s.least = max(s.least, w.width())
		}
	}
	head := 0
	for _, w := range strings.Fields(t.Columns[i].Head) {
		head = max(head, Width(w))
	}
	s.full = max(cells, Width(t.Columns[i].Head))
	s.narrow = max(cells, head)
	s.least = max(s.least, head)
	if !t.Columns[i].Wrap {
		s.least = s.narrow
	}
	return s
}

// fit chooses t's layout at width: every column at its full width when
// that fits; else headings wrapped; else, columns left out by their Drop
// rank, highest first, until what is left fits; else, with every column
// that may go gone, the columns that may wrap narrowed, the widest first,
// and the columns left out taken back, the last left out first, while
// they fit so. ok is false when even that is too wide.
func fit(t *Table, width int) (l layout, dropped []string, ok bool) {
	sizes := make([]columnSizes, len(t.Columns))
	for i := range t.Columns {
		sizes[i] = sizesOf(t, i)
		l.keep = append(l.keep, i)
	}
	l.set(sizes, func(s columnSizes) int { return s.full })
	if l.total() <= width {
		return l, nil, true
	}
	l.set(sizes, narrowWidth)
	var gone []int
	for l.total() > width {
		drop := -1
		for k, i := range l.keep {
			if d := t.Columns[i].Drop; d > 0 && (drop < 0 || d > t.Columns[l.keep[drop]].Drop) {
				drop = k
			}
		}
		if drop < 0 {
			break
		}
		gone = append(gone, l.keep[drop])
		l.keep = slices.Delete(slices.Clone(l.keep), drop, drop+1)
		l.set(sizes, narrowWidth)
	}
	if l.total() <= width {
		l.grow(sizes, width)
		return l, headsOf(t, gone), true
	}
	if !l.shrink(sizes, width) {
		return l, headsOf(t, gone), false
	}
	for len(gone) > 0 {
		back := layout{keep: slices.Sorted(slices.Values(append(slices.Clone(l.keep), gone[len(gone)-1])))}
		back.set(sizes, narrowWidth)
		if !back.shrink(sizes, width) {
			break
		}
		l, gone = back, gone[:len(gone)-1]
	}
	return l, headsOf(t, gone), true
}

func narrowWidth(s columnSizes) int { return s.narrow }

// set gives each kept column its width by pick.
func (l *layout) set(sizes []columnSizes, pick func(columnSizes) int) {
	l.widths = l.widths[:0]
	for _, i := range l.keep {
		l.widths = append(l.widths, pick(sizes[i]))
	}
}

// shrink narrows the columns that may wrap, the widest first, until the
// layout fits width; false when they cannot narrow enough.
func (l *layout) shrink(sizes []columnSizes, width int) bool {
	for l.total() > width {
		widest := -1
		for k, i := range l.keep {
			if l.widths[k] > sizes[i].least && (widest < 0 || l.widths[k] > l.widths[widest]) {
				widest = k
			}
		}
		if widest < 0 {
			return false
		}
		l.widths[widest]--
	}
	return true
}

// headsOf are the headings of t's columns cols, in the order given.
func headsOf(t *Table, cols []int) []string {
	var out []string
	for _, i := range cols {
		out = append(out, t.Columns[i].Head)
	}
	return out
}

// Fits reports whether Text sets t out in columns at width, every column
// kept: neither left out nor written a row as lines; a Trailing table,
// whether its last column has TrailingRoom beside the others.
func Fits(t *Table, width int) bool {
	if t.Trailing {
		return width-trailingOffset(t) >= TrailingRoom
	}
	_, dropped, ok := fit(t, width)
	return ok && len(dropped) == 0
}

// grow widens the kept columns whose heading wraps back towards their full
// width while the table fits width.
func (l *layout) grow(sizes []columnSizes, width int) {
	for k, i := range l.keep {
		if spare := width - l.total(); spare > 0 && sizes[i].full > l.widths[k] {
			l.widths[k] += min(spare, sizes[i].full-l.widths[k])
		}
	}
}

// table writes t fitted to the width (fit), or a Trailing table as
// trailing does: its heading (unless Headless), then its rows,
// each cell wrapped within its column; where no layout fits, each row as
// lines of "heading: value". Below it, the columns it left out.
func (t *textWriter) table(tb *Table) {
	if tb.Trailing {
		t.trailing(tb)
		return
	}
	l, dropped, ok := fit(tb, t.width)
	if !ok {
		t.records(tb)
		return
	}
	if !tb.Headless {
		t.row(tb, l, headCells(tb))
	}
	for _, r := range tb.Rows {
		t.row(tb, l, r)
	}
	if len(dropped) > 0 {
		note := "Left out to fit " + itoa(t.width) + " columns: " + strings.Join(dropped, ", ") + "."
		if tb.More != "" {
			note += " " + tb.More
		}
		t.b.WriteString("\n")
		t.lines(wrapSpans([]Span{Words(note)}, t.width, "", ""))
	}
}

// headCells are t's headings as a row of plain cells.
func headCells(t *Table) []Cell {
	head := make([]Cell, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = Cell{Text: c.Head}
	}
	return head
}

// row writes one row of a table laid out as l: its cells wrapped in their
// columns, side by side, as many lines as its tallest cell.
func (t *textWriter) row(tb *Table, l layout, r []Cell) {
	cols := make([][]line, len(l.keep))
	height := 0
	for k, i := range l.keep {
		if i < len(r) {
			cols[k] = wrapWords(cellWords(r[i]), l.widths[k], "", "")
		}
		height = max(height, len(cols[k]))
	}
	for n := range height {
		var b strings.Builder
		for k, i := range l.keep {
			text, shown := "", ""
			if n < len(cols[k]) {
				text, shown = cols[k][n].plain, cols[k][n].shown(t.colour)
			}
			pad := strings.Repeat(" ", max(l.widths[k]-Width(text), 0))
			if tb.Columns[i].Right {
				b.WriteString(pad + shown)
			} else {
				b.WriteString(shown + pad)
			}
			if k < len(l.keep)-1 {
				b.WriteString(strings.Repeat(" ", tableGap))
			}
		}
		t.b.WriteString(strings.TrimRight(b.String(), " ") + "\n")
	}
}

// records writes each row of a table too wide for any layout as lines of
// "heading: value", wrapped, a blank line between rows.
func (t *textWriter) records(tb *Table) {
	for n, r := range tb.Rows {
		if n > 0 {
			t.b.WriteString("\n")
		}
		for i, c := range r {
			if i >= len(tb.Columns) || c.Text == "" {
				continue
			}
			spans := []Span{Words(tb.Columns[i].Head + ":"), {Text: " " + c.Text, Tone: c.Tone}}
			if c.Spans != nil {
				spans = append([]Span{Words(tb.Columns[i].Head + ": ")}, c.Spans...)
			}
			t.lines(wrapSpans(spans, t.width, "", "    "))
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
