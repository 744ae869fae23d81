package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarkdown(t *testing.T) {
	var d Document
	d.Add(&Heading{Level: 2, Text: "Verdict"},
		&List{Items: []Item{{
			Spans: []Span{Words("fp: "), Toned("yes", Yes), Words(" (a|b)")},
			Sub:   []Item{{Spans: []Span{{Text: "warning: ", Tone: Warning, Strong: true}, Toned("x_y *z* _w_ __v", Warning)}}},
		}}},
		Para(Words("run "), Span{Text: "qoslab run --repeats 12", Code: true}),
		&Table{Columns: []Column{{Head: "target"}, {Head: "n", Right: true}}, Rows: [][]Cell{TextCells("host", "6")}},
		&Fold{Title: "Rule <SI>", Blocks: []Block{Para(Words("long"))}},
		&Code{Lines: []string{"a | b"}})
	var b strings.Builder
	require.NoError(t, Markdown(&b, d))
	assert.Equal(t, "## Verdict\n\n"+
		"- fp: yes (a\\|b)\n  - **warning:** x_y \\*z\\* \\_w\\_ \\_\\_v\n\n"+
		"run `qoslab run --repeats 12`\n\n"+
		"| target | n |\n|---|--:|\n| host | 6 |\n\n"+
		"<details>\n<summary>Rule &lt;SI&gt;</summary>\n\nlong\n\n</details>\n\n"+
		"```\na | b\n```\n", b.String())
}

// MarkdownWrapped wraps prose at spaces into lines a page joins again: a
// list item's lines after the first are indented under its text, a word
// that would open a new block stays on the line before, a long word
// stands alone; a table stays whole however wide.
func TestMarkdownWrapped(t *testing.T) {
	var d Document
	d.Add(Para(Words("one two three - four")),
		&List{Items: []Item{{Spans: []Span{Words("alpha beta gamma")}, Sub: []Item{{Spans: []Span{Words("delta epsilon")}}}}}},
		&Table{Columns: []Column{{Head: "a long heading"}, {Head: "another long one"}}})
	var b strings.Builder
	require.NoError(t, MarkdownWrapped(&b, d, 12))
	assert.Equal(t, "one two\nthree - four\n\n"+
		"- alpha beta\n  gamma\n  - delta\n    epsilon\n\n"+
		"| a long heading | another long one |\n|---|---|\n", b.String())
}

func TestWrapMarkdown(t *testing.T) {
	assert.Equal(t, "- one two\n  three", WrapMarkdown("- one two three", 9, "  "))
	assert.Equal(t, "aaa -\nbbb", WrapMarkdown("aaa - bbb", 4, ""), `"-" would open a list`)
	assert.Equal(t, "aaa 1.\nbbb", WrapMarkdown("aaa 1. bbb", 4, ""), `"1." would open an ordered list`)
	assert.Equal(t, "x\n"+strings.Repeat("y", 20)+"\nz", WrapMarkdown("x "+strings.Repeat("y", 20)+" z", 5, ""))
	for _, w := range []string{"-", "--", "+", "*", ">", "#", "###", "=", "|", "1.", "12)"} {
		assert.True(t, blockMarker(w), w)
	}
	for _, w := range []string{"-6.0%", "1.5x", "a.", "#1", "(95%)", "x"} {
		assert.False(t, blockMarker(w), w)
	}
}
