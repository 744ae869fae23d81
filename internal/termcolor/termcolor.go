// Package termcolor holds the ANSI colours qoslab gives, on a terminal,
// what a reader must not miss: a verdict's answer and warnings (a leaf).
package termcolor

import "io"

// The colours, and Reset, which ends one.
const (
	Red    = "\033[31m"
	Green  = "\033[32m"
	Yellow = "\033[33m"
	Reset  = "\033[0m"
)

// Paint is s in color, then back to the terminal's own.
func Paint(color, s string) string { return color + s + Reset }

// Warner is a stream that takes a warning as a value: the line as its
// format writes it ("  warning: x", "- **warning:** x", without the
// newline) and the warning's own text (x). What colours warnings (a
// terminal) or says each once (bench) has them so, and never finds them
// by reading text back.
type Warner interface {
	Warn(line, text string) error
}

// Warn writes the warning text, written as line, to w: handed to w when w
// takes warnings (Warner), else line and a newline as they are.
func Warn(w io.Writer, line, text string) error {
	if ww, ok := w.(Warner); ok {
		return ww.Warn(line, text)
	}
	_, err := io.WriteString(w, line+"\n")
	return err
}

// Teller is a stream that knows warnings said on it already (bench's
// table says some before its saved run's summary), by their text as a
// value.
type Teller interface {
	Told(text string) bool
}

// Untold are the warnings among texts that w has not said already: every
// one, unless w is a Teller that has said some.
func Untold(w io.Writer, texts []string) []string {
	t, ok := w.(Teller)
	if !ok {
		return texts
	}
	var out []string
	for _, s := range texts {
		if !t.Told(s) {
			out = append(out, s)
		}
	}
	return out
}
