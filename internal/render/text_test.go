package render

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/termcolor"
)

var ansi = regexp.MustCompile("\033\\[[0-9;]*m")

func text(t *testing.T, d Document, width int, colour bool) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, Text(&b, d, width, colour))
	return b.String()
}

// assertFits fails for every line of out wider than width, colours not
// counted.
func assertFits(t *testing.T, out string, width int) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, Width(ansi.ReplaceAllString(l, "")), width, "line %q", l)
	}
}

func TestTextWrapsParagraphsAndItems(t *testing.T) {
	var d Document
	d.Add(&Heading{Level: 1, Text: "title"},
		Para(Words("one two three four five six seven eight")),
		&List{Items: []Item{{Spans: []Span{Words("alpha beta gamma delta")}, Sub: []Item{{Spans: []Span{Words("x y")}}}}}})
	got := text(t, d, 20, false)
	assert.Equal(t, "title\n=====\n\none two three four\nfive six seven eight\n\n- alpha beta gamma\n  delta\n  - x y\n", got)
}

// A word wider than the width (a path) stands alone, uncut.
func TestTextKeepsLongWords(t *testing.T) {
	got := text(t, Document{Blocks: []Block{Para(Words("see /a/very/long/path/indeed now"))}}, 20, false)
	assert.Equal(t, "see\n/a/very/long/path/indeed\nnow\n", got)
}

// Colour comes from each span's tone, whatever its words: a "yes" in a
// plain span stays plain, a word in a No span is red.
func TestTextColoursFromTones(t *testing.T) {
	d := Document{Blocks: []Block{Para(Words("fp: yes means "), Toned("no", No), Words(": "), Toned("careful", Warning))}}
	got := text(t, d, 100, true)
	assert.Equal(t, "fp: yes means "+termcolor.Paint(termcolor.Red, "no")+": "+termcolor.Paint(termcolor.Yellow, "careful")+"\n", got)
	assert.Equal(t, "fp: yes means no: careful\n", text(t, d, 100, false))
}

// A word made of two tones ("no" then ":") is one word for wrapping.
func TestTextJoinsTonesInAWord(t *testing.T) {
	d := Document{Blocks: []Block{Para(Words("aaaaaaaaaaaaaaaa "), Toned("yes", Yes), Words(": bbbb"))}}
	assert.Equal(t, "aaaaaaaaaaaaaaaa\nyes: bbbb\n", text(t, d, 20, false))
}

func table() *Table {
	return &Table{
		Columns: []Column{{Head: "target"}, {Head: "total rate median", Right: true}, {Head: "min", Right: true, Drop: 2},
			{Head: "max", Right: true, Drop: 1}, {Head: "QoS applied", Wrap: true}},
		Rows: [][]Cell{
			TextCells("host", "1.015", "0.8477", "1.073", "user-interactive (partial)"),
			{{Text: "vm"}, {Text: "0.0131"}, {Text: "0.0073"}, {Text: "0.0218"}, {Text: "background", Tone: Inconclusive}},
		},
		More: "The file has them.",
	}
}

func TestTableFitsWhole(t *testing.T) {
	got := text(t, Document{Blocks: []Block{table()}}, 100, false)
	assert.Equal(t, ""+
		"target  total rate median     min     max  QoS applied\n"+
		"host                1.015  0.8477   1.073  user-interactive (partial)\n"+
		"vm                 0.0131  0.0073  0.0218  background\n", got)
}

// Narrowed, a table wraps its headings, then leaves out columns by rank,
// then wraps the columns that may wrap and takes back those left out
// that fit so, the last left out first; it says what it left out.
func TestTableNarrows(t *testing.T) {
	for _, width := range []int{60, 50, 40, 30} {
		got := text(t, Document{Blocks: []Block{table()}}, width, false)
		assertFits(t, got, width)
		assert.Contains(t, got, "host", width)
		assert.Contains(t, got, "user-interactive", width)
	}
	got := text(t, Document{Blocks: []Block{table()}}, 40, false)
	assert.NotContains(t, got, "0.8477", "min, left out")
	assert.Contains(t, got, "0.0218", "max, taken back once the last column wraps")
	assert.Contains(t, strings.Join(strings.Fields(got), " "), "Left out to fit 40 columns: min. The file has them.")
	assert.Contains(t, got, "user-interactive\n", "the last column wraps")
}

// A table no layout fits is written a row as lines of "heading: value".
func TestTableRecords(t *testing.T) {
	tb := &Table{Columns: []Column{{Head: "a"}, {Head: "b"}},
		Rows: [][]Cell{TextCells("a-very-long-cell-value", "another-very-long-value")}}
	got := text(t, Document{Blocks: []Block{tb}}, 30, false)
	assert.Equal(t, "a: a-very-long-cell-value\nb: another-very-long-value\n", got)
}

// A cell's colour comes from its tone, and padding is counted without it.
func TestTableColours(t *testing.T) {
	got := text(t, Document{Blocks: []Block{table()}}, 100, true)
	assert.Contains(t, got, termcolor.Paint(termcolor.Yellow, "background"))
	assertFits(t, got, 100)
}

func TestCodeBreaksAtSpaces(t *testing.T) {
	got := text(t, Document{Blocks: []Block{&Code{Lines: []string{"qoslab run --again results/some-run --repeats 12"}}}}, 30, false)
	assert.Equal(t, "  qoslab run --again \\\n      results/some-run \\\n      --repeats 12\n", got)
	assertFits(t, got, 30)
}

func TestFoldOnATerminal(t *testing.T) {
	d := Document{Blocks: []Block{&Fold{Title: "How to read", Blocks: []Block{Para(Words("text"))}}}}
	assert.Equal(t, "How to read\n\ntext\n", text(t, d, 100, false))
}
