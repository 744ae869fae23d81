package compare

import (
	"io"
	"slices"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results/summary"
)

// TextWidth is the width the text format fits when it is given none: a
// 100-column terminal's.
const TextWidth = 100

// markdownWidth is where Markdown's prose lines wrap (a rendered page
// joins them again); a table's rows cannot wrap.
const markdownWidth = 100

// runsHeading heads the runs' legend in the documents.
const runsHeading = "runs (the first is the baseline)"

// WriteText writes c as a terminal shows it (View), fitted to width
// columns, each verdict coloured by its outcome when colour is on.
func WriteText(w io.Writer, c *Comparison, width int, colour bool) error {
	return render.Text(w, c.View(width), width, colour)
}

// WriteMarkdown writes c as a file shows it (Document) in Markdown, its
// prose wrapped at markdownWidth: compare.md.
func WriteMarkdown(w io.Writer, c *Comparison) error {
	return render.MarkdownWrapped(w, c.Document(), markdownWidth)
}

// View is the comparison as a document for a terminal: the verdict per
// machine (with the keys of the machine columns it keyed to fit 100
// columns, Comparison.fit), the runs, the notes, what the runs differ in,
// a table per workload and the findings, then what the marks mean. Its
// tables are fitted and its prose wrapped by the encoder (render.Text) to
// width; where a column per run would not fit it and no layout was asked
// for, the tables give each run its rows. Each verdict's tone is its
// outcome's.
func (c *Comparison) View(width int) render.Document { return c.document(width, false) }

// Document is the comparison as a file shows it (compare.md): View's
// blocks, its tables fitted to a Markdown table's width (159 characters,
// Comparison.fit) rather than a terminal's, and a column per run kept
// however wide, since a page scrolls.
func (c *Comparison) Document() render.Document { return c.document(0, true) }

func (c *Comparison) document(width int, file bool) render.Document {
	c = c.fit(file)
	if !file && c.Layout == "" && !c.Rowwise() && !c.columnsFit(width) {
		rows := *c
		rows.Layout = LayoutRows
		c = &rows
	}
	var d render.Document
	d.Add(&render.Heading{Level: 2, Text: c.MachineSection().Name})
	d.Add(c.MachineBlocks()...)
	d.Add(&render.Heading{Level: 2, Text: runsHeading})
	d.Add(c.RunBlocks()...)
	for _, s := range c.Sections() {
		d.Add(&render.Heading{Level: 2, Text: s.Name})
		d.Add(SectionBlocks(s)...)
	}
	d.Add(c.FooterList())
	return d
}

// MachineBlocks are the verdict per machine under its heading: what it
// shows, its lead and keys, its table, each run's verdict and its row in
// its outcome's tone, and its notes.
func (c *Comparison) MachineBlocks() []render.Block {
	s := c.MachineSection()
	blocks := sectionBlocks(s, c.verdictTones(s))
	for _, b := range blocks {
		if t, ok := b.(*render.Table); ok {
			for _, m := range c.Machines {
				t.RowTones = append(t.RowTones, summary.AnswerTone(analysis.Outcome(m.Outcome)))
			}
		}
	}
	return blocks
}

// RunBlocks are the runs under their heading (runsHeading): the legend,
// the notes, what the runs differ in and its table.
func (c *Comparison) RunBlocks() []render.Block {
	out := []render.Block{plainList(c.Legend())}
	for _, n := range c.Notes {
		out = append(out, render.Para(render.Span{Text: "note: ", Tone: render.Note, Strong: true}, render.Toned(n, render.Note)))
	}
	out = append(out, render.Para(render.Words(c.DifferenceText())))
	if len(c.Differences) > 0 {
		head, rows := c.DifferenceTable()
		out = append(out, plainTable(head, rows, nil))
	}
	return out
}

// SectionBlocks are a table's section under its heading (its Name): what
// it shows, its lead and keys, its table and its notes.
func SectionBlocks(s Section) []render.Block { return sectionBlocks(s, nil) }

// FooterList is what the marks in the tables mean (Footer).
func (c *Comparison) FooterList() *render.List { return plainList(c.Footer()) }

// columnsFit reports whether every table of c's cells and findings fits
// width as it is laid out.
func (c *Comparison) columnsFit(width int) bool {
	for _, s := range c.Sections() {
		if !render.Fits(plainTable(s.Header, s.Rows, nil), width) {
			return false
		}
	}
	return true
}

// verdictTones are the tones of the per-machine table s's cells: each
// run's verdict in its outcome's, the rest plain.
func (c *Comparison) verdictTones(s Section) [][]render.Tone {
	col := slices.Index(s.Header, "VERDICT")
	if col < 0 {
		return nil
	}
	tones := make([][]render.Tone, len(s.Rows))
	for i := range tones {
		tones[i] = make([]render.Tone, len(s.Header))
		if i < len(c.Machines) {
			tones[i][col] = summary.AnswerTone(analysis.Outcome(c.Machines[i].Outcome))
		}
	}
	return tones
}

// sectionBlocks are a section under its heading: what it shows, its lead
// and keys, its table (cells in tones where tones has them) and its
// notes.
func sectionBlocks(s Section, tones [][]render.Tone) []render.Block {
	out := []render.Block{render.Para(render.Words(s.About + "."))}
	if s.Lead != "" {
		out = append(out, render.Para(render.Words(s.Lead)))
	}
	if len(s.Keys) > 0 {
		out = append(out, plainList(s.Keys))
	}
	t := plainTable(s.Header, s.Rows, tones)
	for i := range t.Columns {
		t.Columns[i].Right = i < len(s.Numeric) && s.Numeric[i]
	}
	out = append(out, t)
	if len(s.Notes) > 0 {
		out = append(out, plainList(s.Notes))
	}
	return out
}

// plainList is a list of plain lines.
func plainList(lines []string) *render.List {
	l := &render.List{}
	for _, s := range lines {
		l.Items = append(l.Items, render.Item{Spans: []render.Span{render.Words(s)}})
	}
	return l
}

// plainTable is a table of texts, each cell in its tone from tones (plain
// where tones has none), every column free to wrap at its spaces where
// the table is too wide ("0.998 [0.996..1.002]" over two lines).
func plainTable(head []string, rows [][]string, tones [][]render.Tone) *render.Table {
	t := &render.Table{}
	for _, h := range head {
		t.Columns = append(t.Columns, render.Column{Head: h, Wrap: true})
	}
	for i, r := range rows {
		cells := render.TextCells(r...)
		for j := range cells {
			if i < len(tones) && j < len(tones[i]) {
				cells[j].Tone = tones[i][j]
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}
