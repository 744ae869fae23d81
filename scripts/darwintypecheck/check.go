package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"go/version"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options says what to check and for which platform.
type Options struct {
	// Dir is where go list runs, so it picks the module; "" is the current
	// directory.
	Dir string
	// Patterns are go list package patterns; none means ./...
	Patterns []string
	// GOOS and GOARCH default to darwin and arm64. Tests set linux to prove
	// that a file excluded for darwin holds a real mistake.
	GOOS, GOARCH string
	// Tags are extra build tags.
	Tags []string
	// Tests adds the packages' _test.go files (go list -test).
	Tests bool
	// GoCmd is the go command; "" is "go" from PATH.
	GoCmd string
}

// Diagnostic is one error in a package of the main module.
type Diagnostic struct {
	Package string
	Pos     token.Position
	Msg     string
}

// DepErrors counts the errors in one dependency outside the main module.
type DepErrors struct {
	Package string
	Count   int
}

// Result is what Check found.
type Result struct {
	GOOS, GOARCH string
	// Errors are the main module's errors, sorted by position.
	Errors []Diagnostic
	// DepErrors are the dependencies with errors, sorted by package. Soft
	// errors do not count, since function bodies of dependencies are not
	// checked and their "imported and not used" would be noise, nor do those
	// fakeCError matches.
	DepErrors []DepErrors
	// Suppressed counts the module's errors about operands of invalid type
	// (see fakeCError), which are not in Errors.
	Suppressed int
	// Packages is how many packages were type-checked, ModulePackages how
	// many of them belong to the main module (test variants included).
	Packages, ModulePackages int
	Duration                 time.Duration
}

// ExitCode is 1 when the module has errors, else 0.
func (r *Result) ExitCode() int {
	if len(r.Errors) > 0 {
		return exitErrors
	}
	return exitClean
}

// listedPackage holds the fields of go list -json that the check uses.
type listedPackage struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	ImportMap  map[string]string
	ForTest    string
	Module     *listedModule
	Error      *listedError
}

// listedModule is the module of a listed package; nil for the standard
// library.
type listedModule struct {
	Path      string
	Main      bool
	GoVersion string
}

// listedError is why go list could not load a package (fully).
type listedError struct {
	Pos string
	Err string
}

// listFields is the -json field list; naming the fields lets go list skip
// work it would do for the others (staleness, for one).
const listFields = "ImportPath,Name,Dir,GoFiles,CgoFiles,Imports,ImportMap,ForTest,Module,Error"

// Check lists the packages for opts' platform and type-checks them all.
// It returns an error only when the check could not run at all.
func Check(ctx context.Context, opts Options) (*Result, error) {
	start := time.Now()
	goos, goarch := cmp.Or(opts.GOOS, "darwin"), cmp.Or(opts.GOARCH, "arm64")
	sizes := types.SizesFor("gc", goarch)
	if sizes == nil {
		return nil, fmt.Errorf("no gc type sizes for GOARCH=%s", goarch)
	}
	pkgs, err := listPackages(ctx, opts, goos, goarch)
	if err != nil {
		return nil, err
	}

	c := &checker{
		fset:   token.NewFileSet(),
		sizes:  sizes,
		byPath: make(map[string]*unit, len(pkgs)),
		sem:    make(chan struct{}, runtime.GOMAXPROCS(0)),
	}
	for i, lp := range pkgs {
		if isTestMain(lp) {
			continue
		}
		u := &unit{index: i, lp: lp, done: make(chan struct{})}
		c.units = append(c.units, u)
		c.byPath[lp.ImportPath] = u
	}
	var wg sync.WaitGroup
	for _, u := range c.units {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(u.done)
			c.check(ctx, u)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("type-check: %w", err)
	}

	res := &Result{GOOS: goos, GOARCH: goarch}
	seen := make(map[string]bool)
	for _, u := range c.units {
		res.Packages++
		if !u.inModule() {
			if u.depErrors > 0 {
				res.DepErrors = append(res.DepErrors, DepErrors{Package: u.lp.ImportPath, Count: u.depErrors})
			}
			continue
		}
		res.ModulePackages++
		res.Suppressed += u.suppressed
		for _, d := range u.diags {
			// A test variant repeats its package's files, and so their errors.
			key := d.Pos.String() + "\x00" + d.Msg
			if !seen[key] {
				seen[key] = true
				res.Errors = append(res.Errors, d)
			}
		}
	}
	slices.SortFunc(res.Errors, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.Package, b.Package),
			cmp.Compare(a.Msg, b.Msg))
	})
	slices.SortFunc(res.DepErrors, func(a, b DepErrors) int { return cmp.Compare(a.Package, b.Package) })
	res.Duration = time.Since(start)
	return res, nil
}

// listPackages runs go list -e -deps -json for the platform with cgo on and
// returns the packages in its order, where each comes after its dependencies.
func listPackages(ctx context.Context, opts Options, goos, goarch string) ([]*listedPackage, error) {
	args := []string{"list", "-e", "-deps", "-json=" + listFields}
	if opts.Tests {
		args = append(args, "-test")
	}
	if len(opts.Tags) > 0 {
		args = append(args, "-tags="+strings.Join(opts.Tags, ","))
	}
	args = append(args, opts.Patterns...)
	if len(opts.Patterns) == 0 {
		args = append(args, "./...")
	}
	cmd := exec.CommandContext(ctx, cmp.Or(opts.GoCmd, "go"), args...) //nolint:gosec // G204: runs the go command, by design
	cmd.Dir = opts.Dir
	// CGO_ENABLED=1 keeps cgo files in; listing them needs no C compiler.
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s (in %s, GOOS=%s GOARCH=%s): %w\n%s",
			strings.Join(args, " "), cmp.Or(opts.Dir, "."), goos, goarch, err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []*listedPackage
	dec := json.NewDecoder(&stdout)
	for {
		lp := new(listedPackage)
		if err := dec.Decode(lp); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, lp)
	}
	return pkgs, nil
}

// isTestMain reports whether lp is the main package go list -test generates
// for a test binary; its only file lives in the build cache and holds nothing
// the module wrote.
func isTestMain(lp *listedPackage) bool {
	return lp.Name == "main" && strings.HasSuffix(lp.ImportPath, ".test") && lp.ForTest == "" &&
		slices.ContainsFunc(lp.GoFiles, filepath.IsAbs)
}

// checker type-checks units concurrently, each after its dependencies.
type checker struct {
	fset   *token.FileSet
	sizes  types.Sizes
	units  []*unit
	byPath map[string]*unit
	// sem bounds the parses and checks running at once.
	sem chan struct{}
}

// unit is one listed package and the outcome of checking it. pkg, diags,
// depErrors and suppressed are written before done is closed and read only
// after.
type unit struct {
	index      int
	lp         *listedPackage
	done       chan struct{}
	pkg        *types.Package
	diags      []Diagnostic
	depErrors  int
	suppressed int
}

func (u *unit) inModule() bool { return u.lp.Module != nil && u.lp.Module.Main }

// check waits for u's dependencies, then parses and type-checks u.
func (c *checker) check(ctx context.Context, u *unit) {
	lp := u.lp
	if lp.Error != nil && u.inModule() {
		u.diags = append(u.diags, listDiagnostic(lp))
	}
	// go list orders dependencies first; waiting only on earlier units means
	// an import cycle (which go list reports as an error) cannot deadlock.
	for _, imp := range lp.Imports {
		if dep := c.byPath[imp]; dep != nil && dep.index < u.index {
			select {
			case <-dep.done:
			case <-ctx.Done():
				return
			}
		}
	}

	// Parsing only now, right before checking, keeps few syntax trees alive
	// at once; independent packages still run in parallel.
	c.sem <- struct{}{}
	defer func() { <-c.sem }()
	files := c.parse(u)
	if len(files) == 0 {
		return
	}
	conf := types.Config{
		GoVersion: goVersion(lp),
		// A dependency only needs its declarations; skipping bodies makes
		// checking the standard library from source several times faster.
		IgnoreFuncBodies: !u.inModule(),
		FakeImportC:      true,
		Sizes:            c.sizes,
		Importer:         importerFunc(func(path string) (*types.Package, error) { return c.importFor(u, path) }),
		Error:            func(err error) { c.record(u, err) },
	}
	// Check's error is the first of those Error received; the package it
	// returns is usable by dependents even when incomplete.
	u.pkg, _ = conf.Check(packagePath(lp.ImportPath), c.fset, files, nil)
}

// parse parses lp's Go and cgo files; a file that fails to parse still
// contributes what the parser recovered.
func (c *checker) parse(u *unit) []*ast.File {
	lp := u.lp
	names := slices.Concat(lp.GoFiles, lp.CgoFiles)
	files := make([]*ast.File, 0, len(names))
	for _, name := range names {
		if !filepath.IsAbs(name) {
			name = filepath.Join(lp.Dir, name)
		}
		src, err := os.ReadFile(name) //nolint:gosec // G304: a source file of the packages go list named
		if err != nil {
			c.record(u, fmt.Errorf("%s: %w", name, err))
			continue
		}
		// Comments are kept because //go:build lines set a file's language
		// version; object resolution is go/types' job.
		f, err := parser.ParseFile(c.fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			c.record(u, err)
		}
		if f != nil {
			files = append(files, f)
		}
	}
	return files
}

// importFor resolves an import of u's source through u's ImportMap (vendored
// standard packages, test variants) to a unit already checked.
func (c *checker) importFor(u *unit, path string) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	resolved := path
	if m, ok := u.lp.ImportMap[path]; ok {
		resolved = m
	}
	dep := c.byPath[resolved]
	switch {
	case dep == nil:
		return nil, fmt.Errorf("%s is not among the packages go list reported", resolved)
	case dep.index >= u.index:
		return nil, fmt.Errorf("%s is listed after its importer %s (import cycle?)", resolved, u.lp.ImportPath)
	case dep.pkg == nil && dep.lp.Error != nil:
		return nil, fmt.Errorf("%s: %s", resolved, dep.lp.Error.Err)
	case dep.pkg == nil:
		return nil, fmt.Errorf("%s has no Go files for this platform", resolved)
	}
	return dep.pkg, nil
}

// record keeps an error of u: as a diagnostic in the main module, as a count
// elsewhere.
func (c *checker) record(u *unit, err error) {
	if !u.inModule() {
		var terr types.Error
		if !errors.As(err, &terr) || !terr.Soft && !fakeCError(terr) {
			u.depErrors++
		}
		return
	}
	var list scanner.ErrorList
	var terr types.Error
	switch {
	case errors.As(err, &list):
		for _, e := range list {
			u.diags = append(u.diags, Diagnostic{Package: u.lp.ImportPath, Pos: e.Pos, Msg: e.Msg})
		}
	case errors.As(err, &terr) && fakeCError(terr):
		u.suppressed++
	case errors.As(err, &terr):
		u.diags = append(u.diags, Diagnostic{Package: u.lp.ImportPath, Pos: terr.Fset.Position(terr.Pos), Msg: terr.Msg})
	default:
		u.diags = append(u.diags, Diagnostic{Package: u.lp.ImportPath, Msg: err.Error()})
	}
}

// fakeCError reports whether err is about an operand of invalid type. With
// FakeImportC, C.f() in the package being checked is silently invalid, but a
// function of another package declared to return a C type (vz's
// internal/objc.GetUUID() *C.char) yields a value whose type is invalid, and
// converting or using it is reported ("cannot convert objc.GetUUID() (value
// with invalid type) to type *char"). go/types itself drops such messages as
// follow-on errors once a package has one error (error_.report in
// go/types/errors.go, by the same test); this drops them always, since here
// they follow from C, and without cgo they only follow an error already
// reported.
func fakeCError(err types.Error) bool {
	return strings.Index(err.Msg, "invalid operand") > 0 || strings.Index(err.Msg, "invalid type") > 0
}

// listDiagnostic turns go list's error for a package (a bad import, a cycle,
// no files for the platform) into a diagnostic at the position go list gives.
func listDiagnostic(lp *listedPackage) Diagnostic {
	d := Diagnostic{Package: lp.ImportPath, Msg: lp.Error.Err}
	if p := lp.Error.Pos; p != "" {
		// go list prints the position relative to its directory.
		pos, err := parsePosition(p)
		if err == nil {
			if !filepath.IsAbs(pos.Filename) {
				pos.Filename = filepath.Join(lp.Dir, filepath.Base(pos.Filename))
			}
			d.Pos = pos
			d.Msg = strings.TrimPrefix(d.Msg, p+": ")
		}
	}
	return d
}

// parsePosition parses file:line:col or file:line.
func parsePosition(s string) (token.Position, error) {
	rest, last, ok := cutLast(s)
	if !ok {
		return token.Position{}, fmt.Errorf("position %q: no line", s)
	}
	n, err := strconv.Atoi(last)
	if err != nil {
		return token.Position{}, fmt.Errorf("position %q: %w", s, err)
	}
	if file, mid, ok := cutLast(rest); ok {
		if line, err := strconv.Atoi(mid); err == nil {
			return token.Position{Filename: file, Line: line, Column: n}, nil
		}
	}
	return token.Position{Filename: rest, Line: n}, nil
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// goVersion is the language version to check lp with: its module's go line,
// go1.16 for a module without one (as the go command assumes), and for the
// standard library the version of the go/types doing the check.
func goVersion(lp *listedPackage) string {
	if lp.Module == nil {
		return version.Lang(runtime.Version())
	}
	if lp.Module.GoVersion == "" {
		return "go1.16"
	}
	return version.Lang("go" + lp.Module.GoVersion)
}

// packagePath drops the " [p.test]" suffix go list gives test variants.
func packagePath(importPath string) string {
	path, _, _ := strings.Cut(importPath, " ")
	return path
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
