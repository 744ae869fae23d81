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

// writeBench writes the chosen format to --out, then the table to the
// terminal, or the format to stdout.
func writeBench(o *benchOptions, doc *benchdoc.Bench) error {
	if o.Out == "" {
		return benchdoc.WriteBench(o.IO.Out, o.Format, doc)
	}
	return benchdoc.WriteBenchFile(o.IO.Out, o.IO.ErrOut, o.Out, o.Format, doc)
}
