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
