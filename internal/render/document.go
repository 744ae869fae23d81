package render

import "strings"

// Tone is what a span of text or a table's cell says that a reader must
// not miss: a verdict's answer, a warning, a note. It is set from the
// values the text is made from (a verdict's outcome, a warning returned
// as one), never found by reading the text; a terminal shows it in colour
// (Text), a file as it is.
type Tone int

// The tones: Plain says nothing more than its words; Yes, No and
// Inconclusive are a verdict's answers; Warning and Note mark a warning's
// and a note's words.
const (
	Plain Tone = iota
	Yes
	No
	Inconclusive
	Warning
	Note
)

// Span is a run of text in one tone. Strong asks the Markdown encoder for
// emphasis (a label: "warning:"); Code marks a command or a name to be
// copied as it is; Keep holds its words together: Text never breaks a
// line at its spaces ("fp yes," stays on one line).
type Span struct {
	Text   string
	Tone   Tone
	Strong bool
	Code   bool
	Keep   bool
}

// Words is text as one plain span.
func Words(text string) Span { return Span{Text: text} }

// Toned is text as one span in tone t.
func Toned(text string, t Tone) Span { return Span{Text: text, Tone: t} }

// Block is a part of a Document: a *Heading, *Paragraph, *Code, *List,
// *Table or *Fold.
type Block interface{ block() }

// Heading heads what follows it; Level 1 is the document's title.
type Heading struct {
	Level int
	Text  string
}

// Paragraph is prose, its spans joined as they are (a span carries the
// spaces it needs) and wrapped by the encoder.
type Paragraph struct{ Spans []Span }

// Code is lines to be copied as they are: a command, an example. Lang
// names their language where a file says it ("yaml": Markdown writes it
// after the fence).
type Code struct {
	Lines []string
	Lang  string
}

// List is a bulleted list.
type List struct{ Items []Item }

// Item is one entry of a List, with the entries under it (Sub).
type Item struct {
	Spans []Span
	Sub   []Item
}

// Table is a table of cells in columns. Where the encoder must narrow it
// (Text), it leaves out the columns with a Drop rank, highest first, then
// wraps the columns that may wrap; More says where what it left out can
// be seen ("--format md shows every column"). RowTones, where it has a
// row's, is the tone of that row as a whole (a run's verdict in a table of
// runs): HTML colours the row, the other encoders leave it to its cells.
//
// A Trailing table is laid out otherwise (Text): its last column is each
// row's trailing text (a check's detail, a run's verdicts); the other
// columns keep their full widths and the last wraps beside them where it
// has room (TrailingRoom columns, and its cell's longest word), else
// under its row, indented. Headless leaves out the heading line on a
// terminal, where the cells say what they are; a file has it.
type Table struct {
	Columns  []Column
	Rows     [][]Cell
	More     string
	RowTones []Tone
	Trailing bool
	Headless bool
}

// Column is a table's column: its heading, whether its cells are numbers
// (aligned right), whether they may wrap at their spaces, and its Drop
// rank: 0 keeps it always, else the highest ranks go first. Long is its
// heading where there is room for it (Markdown, HTML: "min (loops/s)"
// where a terminal says "min"); Head where empty.
type Column struct {
	Head  string
	Long  string
	Right bool
	Wrap  bool
	Drop  int
}

// LongHead is c's heading where there is room: Long, else Head.
func (c Column) LongHead() string {
	if c.Long != "" {
		return c.Long
	}
	return c.Head
}

// Cell is a table's cell: its text, in a tone. Spans, where set (a cell
// of parts, SpanCell), are its words as a terminal shows them, each part
// in its own tone and kept whole where Keep; Text is then their texts
// joined, which the encoders that show no tones write.
type Cell struct {
	Text  string
	Tone  Tone
	Spans []Span
}

// SpanCell is a cell of spans: a verdict's answers in their tones among
// plain words, each verdict kept on one line.
func SpanCell(spans ...Span) Cell {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.Text)
	}
	return Cell{Text: b.String(), Spans: spans}
}

// Fold is a section a reader may skip: its title, then its blocks (folded
// in Markdown, as <details>; under a heading on a terminal).
type Fold struct {
	Title  string
	Blocks []Block
}

func (*Heading) block()   {}
func (*Paragraph) block() {}
func (*Code) block()      {}
func (*List) block()      {}
func (*Table) block()     {}
func (*Fold) block()      {}

// Document is what a command shows, as blocks in reading order, for an
// encoder to write: Text for a terminal, Markdown for a file.
type Document struct{ Blocks []Block }

// Add appends blocks to d.
func (d *Document) Add(blocks ...Block) { d.Blocks = append(d.Blocks, blocks...) }

// Para is a paragraph of spans.
func Para(spans ...Span) *Paragraph { return &Paragraph{Spans: spans} }

// TextCells are plain cells of texts: a row.
func TextCells(texts ...string) []Cell {
	out := make([]Cell, len(texts))
	for i, t := range texts {
		out[i] = Cell{Text: t}
	}
	return out
}
