package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/qoslab/qoslab/internal/report"
)

// output is where a formatted result goes: a temporary file renamed into
// place at the end (so a failed write never leaves half a file), or stdout.
type output struct {
	path string
	tmp  *os.File
}

// openOutput opens path (named as setting name in errors) for writing, or
// stdout when path is empty. It fails before anything is measured when the
// file cannot be written.
func openOutput(name, path string) (*output, error) {
	if path == "" {
		return &output{}, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, usageErrorf("%s %s: cannot write there: %w", name, path, err)
	}
	return &output{path: path, tmp: tmp}, nil
}

func (w *output) commit() error {
	err := w.tmp.Sync()
	if cerr := w.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.tmp.Name(), w.path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

func (w *output) abort() {
	if w.tmp != nil {
		w.tmp.Close()
		os.Remove(w.tmp.Name())
	}
}

// writeBench writes the chosen format to --out (then the table to the
// terminal) or to stdout. If --out cannot be written, the output goes to
// stdout instead so nothing measured is lost.
func writeBench(o *BenchOptions, out *output, doc *report.Bench) error {
	if out.tmp == nil {
		return report.WriteBench(o.IO.Out, o.Format, doc)
	}
	err := report.WriteBench(out.tmp, o.Format, doc)
	if err == nil {
		err = out.commit()
	}
	if err != nil {
		out.abort()
		fmt.Fprintf(o.IO.ErrOut, "qoslab: --out %s failed (%v); writing %s to stdout instead\n", out.path, err, o.Format)
		if rerr := report.WriteBench(o.IO.Out, o.Format, doc); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "wrote %s (%s, %d records)\n", out.path, o.Format, len(doc.Samples))
	return report.WriteBench(o.IO.Out, "table", doc)
}
