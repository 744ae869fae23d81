package cli

import (
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/render"
)

// defaultWidth is the width a table or a help text fits where stdout is
// no terminal (a pipe, a file, a test): a 100-column terminal's, so what
// is kept or mailed reads as it did on one.
const defaultWidth = 100

// minWidth is the narrowest terminal whose width is taken as it is; below
// it (or unknown) text fits defaultWidth.
const minWidth = 40

// width is the columns Out's text fits: the terminal's when Out is one,
// else defaultWidth.
func (s *IOStreams) width() int {
	if s.Width >= minWidth {
		return s.Width
	}
	return defaultWidth
}

// colored says whether Out gets colour (a terminal, unless the environment
// asks for none; see colorStreams).
func (s *IOStreams) colored() bool { return s.Verdicts != 0 }

// viewFormats are the formats of a command that shows a table (doctor,
// results list): the terminal's view, fitted to its width; Markdown and
// CSV, the same table with every column (render); the command's JSON.
var viewFormats = []string{render.FormatText, render.FormatMarkdown, render.FormatJSON, render.FormatCSV}

// formatFlags adds --format (one of viewFormats, text by default) and
// --json, its alias for --format json, whose help says what JSON prints.
func formatFlags(cmd *cobra.Command, format *string, json *bool, jsonHelp string) {
	cmd.Flags().StringVar(format, "format", render.FormatText, "output format: text (fits the terminal), md, json, csv")
	cmd.Flags().BoolVar(json, "json", false, jsonHelp+": --format json")
	complete(cmd, "format", func() []string { return viewFormats })
}

// checkFormat makes --json --format json, refusing it beside another
// --format, and refuses a format not in viewFormats.
func checkFormat(cmd *cobra.Command, format *string, json bool) error {
	if json {
		if cmd.Flags().Changed("format") && *format != render.FormatJSON {
			return usageErrorf("--json is --format json: it cannot go with --format %s", *format)
		}
		*format = render.FormatJSON
	}
	return oneOf("--format", *format, viewFormats)
}

// word is one word of plain text, which a line breaks before or after,
// never inside.
type word struct{ text string }

// textWords are the words of plain text s.
func textWords(s string) []word {
	var ws []word
	for _, f := range strings.Fields(s) {
		ws = append(ws, word{text: f})
	}
	return ws
}

func textWidth(s string) int { return utf8.RuneCountInString(s) }

// wrapWords lays ws out in lines of at most width columns, breaking only
// between words: a word wider than width (a long path) stands alone on
// its line rather than be cut, so it can still be copied.
func wrapWords(ws []word, width int) []string {
	var lines []string
	var b strings.Builder
	n := 0
	for _, w := range ws {
		wl := textWidth(w.text)
		if n > 0 && n+1+wl > width {
			lines = append(lines, b.String())
			b.Reset()
			n = 0
		}
		if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w.text)
		n += wl
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, b.String())
	}
	return lines
}

// wrapText wraps each line of s longer than width at its spaces, its
// continuations indented as the line is, and leaves every other line (a
// hand-laid example, a list) as it is.
func wrapText(s string, width int) string {
	lines := strings.Split(s, "\n")
	var out []string
	for _, l := range lines {
		if textWidth(l) <= width {
			out = append(out, l)
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
		for _, part := range wrapWords(textWords(l), width-len(indent)) {
			out = append(out, indent+part)
		}
	}
	return strings.Join(out, "\n")
}

// minLast is the narrowest a command's summary may be beside its name
// in the help (fitHelp), as a table's trailing column (render.TrailingRoom).
const minLast = render.TrailingRoom
