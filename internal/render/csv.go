package render

import (
	"encoding/csv"
	"io"
)

// CSV writes the table t as CSV (RFC 4180): its headings, then a line per
// row with every column; tones are not written. A table meant for
// programs carries its numbers in full in its cells and its units in its
// headings, as summary.csv does.
func CSV(w io.Writer, t *Table) error {
	cw := csv.NewWriter(w)
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = c.Head
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range t.Rows {
		line := make([]string, len(t.Columns))
		for i := range line {
			if i < len(r) {
				line[i] = r[i].Text
			}
		}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
