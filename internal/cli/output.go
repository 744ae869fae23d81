package cli

import "github.com/qoslab/qoslab/internal/benchdoc"

// checkOut fails, before anything is measured, when --out (named name)
// cannot be written.
func checkOut(name, path string) error {
	if path == "" {
		return nil
	}
	if err := benchdoc.CheckWritable(path); err != nil {
		return usageErrorf("%s %s: cannot write there: %w", name, path, err)
	}
	return nil
}

// writeBench writes the chosen format to --out, then the text to the
// terminal, or the format to stdout; the text fits the terminal's width
// (100 columns off one) and is coloured from its tones where Out is
// coloured.
func writeBench(o *benchOptions, doc *benchdoc.Bench) error {
	term := benchdoc.Terminal{Width: o.IO.width(), Colour: o.IO.colored()}
	if o.Out == "" {
		return benchdoc.WriteBench(o.IO.Out, o.Format, doc, term)
	}
	return benchdoc.WriteBenchFile(o.IO.Out, o.IO.ErrOut, o.Out, o.Format, doc, term)
}
