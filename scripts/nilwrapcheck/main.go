// Command nilwrapcheck finds fmt.Errorf calls that wrap an error with %w
// where the error can be nil, which prints "%!w(<nil>)" instead of a
// reason: the body of `if !ok || err != nil`, of `if err == nil`, and the
// else branch of `if err != nil`. It reads only the syntax, so it checks
// every .go file of the module, darwin files included, on any machine;
// `make vet` runs it.
//
// Usage:
//
//	nilwrapcheck [dir]
//
// dir defaults to the current directory. Exit status: 0 nothing found, 1
// findings (printed as file:line:col: message), 2 the check could not run.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	dir := "."
	switch len(args) {
	case 0:
	case 1:
		dir = args[0]
	default:
		fmt.Fprintln(stderr, "usage: nilwrapcheck [dir]")
		return 2
	}
	findings, err := CheckDir(dir)
	if err != nil {
		fmt.Fprintln(stderr, "nilwrapcheck:", err)
		return 2
	}
	cwd, _ := os.Getwd()
	for _, f := range findings {
		if rel, err := filepath.Rel(cwd, f.Pos.Filename); err == nil {
			f.Pos.Filename = rel
		}
		fmt.Fprintln(stdout, f)
	}
	if len(findings) > 0 {
		fmt.Fprintf(stderr, "nilwrapcheck: %d fmt.Errorf calls may wrap a nil error\n", len(findings))
		return 1
	}
	return 0
}
