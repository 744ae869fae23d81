// Command darwintypecheck type-checks Go packages as they would build for
// GOOS=darwin GOARCH=arm64 with cgo enabled, on a machine that cannot compile
// them: no Mac, no Xcode, no Objective-C compiler. It is what
// scripts/darwin-typecheck runs.
//
// How: `go list -e -deps -json` (with GOOS, GOARCH and CGO_ENABLED=1 in its
// environment, which is all listing needs, not a C compiler) picks the files
// of every package and its dependencies after build constraints, so a
// //go:build linux file or a _linux.go file is never seen, and ./... skips a
// package with no darwin files. Each package's GoFiles and CgoFiles are parsed
// with go/parser (C, Objective-C and assembly sources are ignored) and
// type-checked with go/types in dependency order, with Config.FakeImportC,
// the gc sizes of arm64, the language version of the package's module, and an
// importer that hands out the packages already checked ("unsafe" is
// types.Unsafe). Test files are included unless -test=false.
//
// The standard library and third-party modules (vz among them) are checked
// from source too, because export data for darwin with cgo cannot be produced
// here; their function bodies are skipped, since importers only see
// declarations, and their errors are counted, not printed. The count matters:
// a declaration that fails to check has an invalid type, which silences errors
// in the code using it; with Go 1.26 the standard library and vz v3.7.1 check
// with none. A module that go.mod replaces with a folder is checked from
// that folder, as go list resolves it: vz is the patched copy in
// internal/hv/vz/vzpatched. A package that fails to load or parse still hands its importers
// what could be checked. Errors in the main module's packages are printed as
// file:line:col: message and make the exit status 1; so do go list's errors
// for them (a bad import, or a package named explicitly that has no darwin
// files).
//
// What FakeImportC means for what is caught: `import "C"` declares an empty
// package and every C.name is accepted without being looked up, and has an
// invalid type. So the checker catches, in cgo files with Objective-C
// preambles as in any other darwin file, Go-level misuse:
//   - calls to Go functions and methods (such as vz's Go wrappers) with the
//     wrong number or types of arguments, or unknown functions and methods;
//   - the wrong number of results on the left of an assignment;
//   - unused variables and imports, undefined names, wrong field names,
//     missing interface methods, and everything else go/types reports.
//
// It does not catch anything about C: unknown C names, wrong C argument
// counts or types, missing #include lines, C or Objective-C syntax, #cgo
// flags, or link errors. And because a C expression has an invalid type,
// errors that depend on it are silenced: passing C.CString(s) where a Go
// string is expected, or using the result of C.f() wrongly, is not reported.
// Errors about operands of invalid type are dropped and only counted (see
// fakeCError): they arise when a function of another package returns a C
// type, as vz's internal/objc does. The real compile and link happen only on
// a Mac (scripts/darwin-smoke.sh).
//
// Usage:
//
//	darwintypecheck [-C dir] [-tags list] [-test=false] [-v] [packages]
//
// Packages default to ./... of the module in dir. Exit status: 0 no errors,
// 1 errors in the module's packages, 2 the check could not run (bad flags, or
// go list failed).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses of run.
const (
	exitClean  = 0
	exitErrors = 1
	exitFailed = 2
)

// run parses args, checks, prints the module's errors to stdout and a
// summary to stderr, and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("darwin-typecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("C", ".", "directory of the module to check (go list runs there)")
	tags := fs.String("tags", "", "comma-separated extra build tags")
	tests := fs.Bool("test", true, "check _test.go files too")
	verbose := fs.Bool("v", false, "also list the dependencies that had type errors, with their counts")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: darwin-typecheck [-C dir] [-tags list] [-test=false] [-v] [packages]")
		fmt.Fprintln(stderr, "Type-checks packages for darwin/arm64 with cgo treated as opaque (go/types FakeImportC).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitClean
		}
		return exitFailed
	}

	opts := Options{Dir: *dir, Patterns: fs.Args(), Tests: *tests}
	if *tags != "" {
		opts.Tags = strings.Split(*tags, ",")
	}
	res, err := Check(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "darwin-typecheck:", err)
		return exitFailed
	}

	cwd, _ := os.Getwd()
	for _, d := range res.Errors {
		fmt.Fprintln(stdout, d.Format(cwd))
	}
	if *verbose {
		for _, dep := range res.DepErrors {
			fmt.Fprintf(stderr, "darwin-typecheck: dependency %s: %d type errors (not reported)\n", dep.Package, dep.Count)
		}
	}
	depErrs := 0
	for _, dep := range res.DepErrors {
		depErrs += dep.Count
	}
	fmt.Fprintf(stderr, "darwin-typecheck: %s/%s: %d packages (%d in the module) in %.1fs: %d errors in the module (%d more on values of C type dropped); %d errors in %d dependencies, not reported\n",
		res.GOOS, res.GOARCH, res.Packages, res.ModulePackages, res.Duration.Seconds(),
		len(res.Errors), res.Suppressed, depErrs, len(res.DepErrors))
	return res.ExitCode()
}

// Format renders d as file:line:col: message, with the file relative to dir
// when it lies below dir, as the go command prints positions.
func (d Diagnostic) Format(dir string) string {
	pos := d.Pos
	if dir != "" && pos.Filename != "" {
		if rel, err := filepath.Rel(dir, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") {
			pos.Filename = rel
		}
	}
	if !pos.IsValid() {
		return fmt.Sprintf("%s: %s", d.Package, d.Msg)
	}
	return fmt.Sprintf("%s: %s", pos, d.Msg)
}
