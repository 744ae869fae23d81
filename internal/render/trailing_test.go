package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/qoslab/qoslab/internal/termcolor"
)

// A Trailing table's last cell wraps beside its row; one with a word
// wider than the room there goes under its row, indented; a Headless one
// has no heading line.
func TestTrailingWrapsBesideOrUnder(t *testing.T) {
	tb := &Table{Trailing: true, Headless: true, Columns: []Column{{Head: "MARK"}, {Head: "NAME"}, {Head: "DETAIL"}},
		Rows: [][]Cell{
			TextCells("ok", "name", "one two three four five six seven eight nine ten eleven"),
			TextCells("MISSING", "other", "see /a/path/far/wider/than/the/last/column/of/the/table"),
			TextCells("", "", "fix: this"),
			TextCells("n/a", "bare"),
		}}
	got := text(t, Document{Blocks: []Block{tb}}, 40, false)
	assert.Equal(t, `ok       name   one two three four five
                six seven eight nine ten
                eleven
MISSING  other
    see
    /a/path/far/wider/than/the/last/column/of/the/table
                fix: this
n/a      bare
`, got)
	assertFits(t, strings.ReplaceAll(got, "/a/path/far/wider/than/the/last/column/of/the/table", ""), 40)
}

// Where the last column would have less than TrailingRoom beside the
// others, every row's last cell goes under it, the heading's too; Fits
// says so.
func TestTrailingUnderWhenNarrow(t *testing.T) {
	tb := &Table{Trailing: true, Columns: []Column{{Head: "DIRECTORY"}, {Head: "VERDICT"}},
		Rows: [][]Cell{TextCells("a-rather-long-directory-name", "fp yes")}}
	assert.True(t, Fits(tb, 30+TrailingRoom))
	assert.False(t, Fits(tb, 29+TrailingRoom))
	got := text(t, Document{Blocks: []Block{tb}}, 40, false)
	assert.Equal(t, "DIRECTORY\n    VERDICT\na-rather-long-directory-name\n    fp yes\n", got)
}

// A cell of spans breaks only between its Keep spans ("fp yes," is never
// split), and colours each span by its tone, whatever its words.
func TestSpanCellKeepsParts(t *testing.T) {
	cell := SpanCell(Span{Text: "fp ", Keep: true}, Toned("yes", Yes), Words(", "),
		Span{Text: "compress ", Keep: true}, Toned("inconclusive", Inconclusive), Words(", "),
		Span{Text: "decompress ", Keep: true}, Toned("no", No))
	assert.Equal(t, "fp yes, compress inconclusive, decompress no", cell.Text)
	tb := &Table{Trailing: true, Headless: true, Columns: []Column{{Head: "RUN"}, {Head: "VERDICT"}},
		Rows: [][]Cell{{{Text: "run-1"}, cell}}}
	got := text(t, Document{Blocks: []Block{tb}}, 30, false)
	assert.Equal(t, "run-1  fp yes,\n       compress inconclusive,\n       decompress no\n", got)
	coloured := text(t, Document{Blocks: []Block{tb}}, 30, true)
	assert.Contains(t, coloured, "fp "+termcolor.Paint(termcolor.Green, "yes")+",\n")
	assert.Contains(t, coloured, "compress "+termcolor.Paint(termcolor.Yellow, "inconclusive")+",\n")
	assert.Equal(t, got, ansi.ReplaceAllString(coloured, ""))
}

// A Headless table keeps its headings in a file (Markdown, CSV), and a
// cell of spans is its text there.
func TestTrailingInFiles(t *testing.T) {
	tb := &Table{Trailing: true, Headless: true, Columns: []Column{{Head: "RUN"}, {Head: "VERDICT"}},
		Rows: [][]Cell{{{Text: "run-1"}, SpanCell(Span{Text: "fp ", Keep: true}, Toned("yes", Yes))}}}
	var md, csv strings.Builder
	assert.NoError(t, Markdown(&md, Document{Blocks: []Block{tb}}))
	assert.Equal(t, "| RUN | VERDICT |\n|---|---|\n| run-1 | fp yes |\n", md.String())
	assert.NoError(t, CSV(&csv, tb))
	assert.Equal(t, "RUN,VERDICT\nrun-1,fp yes\n", csv.String())
}

// A table too wide for any layout writes a cell of spans as a record's
// value, each span in its tone and kept whole.
func TestRecordsKeepSpans(t *testing.T) {
	tb := &Table{Columns: []Column{{Head: "RUN"}, {Head: "VERDICT"}},
		Rows: [][]Cell{{{Text: "a-run-named-at-length"}, SpanCell(Span{Text: "fp ", Keep: true}, Toned("yes", Yes), Words(", "),
			Span{Text: "compress ", Keep: true}, Toned("no", No))}}}
	got := text(t, Document{Blocks: []Block{tb}}, 20, true)
	assert.Equal(t, "RUN:\n    a-run-named-at-length\nVERDICT: fp "+termcolor.Paint(termcolor.Green, "yes")+",\n    compress "+termcolor.Paint(termcolor.Red, "no")+"\n", got)
}
