// Package termcolor holds the ANSI colours qoslab gives, on a terminal,
// what a reader must not miss: a verdict's answer and warnings (a leaf).
package termcolor

// The colours, and Reset, which ends one.
const (
	Red    = "\033[31m"
	Green  = "\033[32m"
	Yellow = "\033[33m"
	Reset  = "\033[0m"
)

// Paint is s in color, then back to the terminal's own.
func Paint(color, s string) string { return color + s + Reset }
