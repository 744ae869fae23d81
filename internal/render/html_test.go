package render

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every block becomes its element, escaped; a tone becomes its class, on a
// span and on a table's cell; a number's cell is marked num; a fold is a
// <details>; a table scrolls in its own box.
func TestHTML(t *testing.T) {
	var d Document
	d.Add(&Heading{Level: 2, Text: "Verdict <1>"},
		Para(Words("fp: "), Toned("yes", Yes), Span{Text: " warning:", Strong: true, Tone: Warning}),
		&List{Items: []Item{{Spans: []Span{Words("a & b")}, Sub: []Item{{Spans: []Span{{Text: "qoslab run --again X", Code: true}}}}}}},
		&Fold{Title: "How to read this", Blocks: []Block{&Code{Lines: []string{"x < y"}}}},
		&Table{Columns: []Column{{Head: "cell"}, {Head: "median", Right: true}}, Rows: [][]Cell{{{Text: "host fp"}, {Text: "1.02x", Tone: Inconclusive}}}})
	var b bytes.Buffer
	require.NoError(t, HTML(&b, d))
	assert.Equal(t, `<h2>Verdict &lt;1&gt;</h2>
<p>fp: <span class="yes">yes</span><span class="warning"><strong> warning:</strong></span></p>
<ul>
<li>a &amp; b
<ul>
<li><code>qoslab run --again X</code></li>
</ul>
</li>
</ul>
<details><summary>How to read this</summary>
<pre><code>x &lt; y</code></pre>
</details>
<div class="table"><table>
<thead><tr><th>cell</th><th class="num">median</th></tr></thead>
<tbody>
<tr><td>host fp</td><td class="num inconclusive">1.02x</td></tr>
</tbody>
</table></div>
`, b.String())
}

// CSV writes every column of every row, quoted where it must be, and no
// tone.
func TestCSV(t *testing.T) {
	tbl := &Table{Columns: []Column{{Head: "cell"}, {Head: "note", Drop: 1}}, Rows: [][]Cell{{{Text: "host, fp"}, {Text: `say "hi"`, Tone: Warning}}, {{Text: "vm"}}}}
	var b bytes.Buffer
	require.NoError(t, CSV(&b, tbl))
	assert.Equal(t, "cell,note\n\"host, fp\",\"say \"\"hi\"\"\"\nvm,\n", b.String())
}

// A row in a tone (RowTones) carries its tone's class, so that a page
// colours the whole row (a run's verdict); a row past RowTones, or plain,
// carries none.
func TestHTMLRowTones(t *testing.T) {
	tbl := &Table{Columns: []Column{{Head: "run"}, {Head: "verdict"}},
		Rows:     [][]Cell{TextCells("a", "yes"), TextCells("b", "no"), TextCells("c", "-")},
		RowTones: []Tone{Yes, Plain}}
	var b bytes.Buffer
	require.NoError(t, HTML(&b, Document{Blocks: []Block{tbl}}))
	assert.Contains(t, b.String(), "<tbody>\n<tr class=\"yes\"><td>a</td><td>yes</td></tr>\n<tr><td>b</td><td>no</td></tr>\n<tr><td>c</td><td>-</td></tr>\n</tbody>")
}
