package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/testvm"
)

// fixture is the module of testdata/darwin-typecheck: vzshape mimics vz's
// cgo wrappers, clean uses them rightly, broken wrongly, and a linux-only
// file and package hold mistakes that checking for darwin must not see.
func fixture(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "darwin-typecheck"))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, "go.mod"))
	return dir
}

// want is an error a fixture line expects, from a comment at its end:
// "// want `re`" when checking for darwin, "// want:test `re`" only with
// test files, "// want:linux `re`" only when checking for linux.
type want struct {
	kind string
	pos  token.Position
	re   *regexp.Regexp
}

var wantComment = regexp.MustCompile("// want(?::(\\w+))? `([^`]*)`")

// wants reads the want comments of every Go file under dir, and the lines
// marked "not caught:" (mistakes that FakeImportC cannot see).
func wants(t *testing.T, dir string) (all []want, notCaught []token.Position) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			pos := token.Position{Filename: path, Line: i + 1}
			if m := wantComment.FindStringSubmatch(line); m != nil {
				all = append(all, want{kind: m[1], pos: pos, re: regexp.MustCompile(m[2])})
			}
			if strings.Contains(line, "// not caught:") {
				notCaught = append(notCaught, pos)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return all, notCaught
}

// assertReported checks that errs are exactly the wants of the given kinds:
// each want matched by an error on its line, and no error without a want.
func assertReported(t *testing.T, errs []Diagnostic, all []want, kinds ...string) {
	t.Helper()
	matched := make([]bool, len(errs))
	n := 0
	for _, w := range all {
		if !slices.Contains(kinds, w.kind) {
			continue
		}
		n++
		found := false
		for i, d := range errs {
			if d.Pos.Filename == w.pos.Filename && d.Pos.Line == w.pos.Line && w.re.MatchString(d.Msg) {
				matched[i], found = true, true
			}
		}
		assert.True(t, found, "%s:%d: no error matching %q; got:\n%s", w.pos.Filename, w.pos.Line, w.re, formatAll(errs))
	}
	require.NotZero(t, n, "the fixture has no wants of kinds %q", kinds)
	for i, d := range errs {
		assert.True(t, matched[i], "unexpected error %s", d.Format(""))
	}
}

func formatAll(errs []Diagnostic) string {
	var b strings.Builder
	for _, d := range errs {
		b.WriteString(d.Format("") + "\n")
	}
	return b.String()
}

func TestCheckReportsWrongCallsInDarwinFiles(t *testing.T) {
	dir := fixture(t)
	all, notCaught := wants(t, dir)
	res, err := Check(context.Background(), Options{Dir: dir})
	require.NoError(t, err)

	assertReported(t, res.Errors, all, "")
	assert.Equal(t, exitErrors, res.ExitCode())
	assert.Equal(t, "darwin", res.GOOS)
	assert.Equal(t, "arm64", res.GOARCH)
	// vzshape, vzshape/internal/objc, clean, broken; linuxonly has no
	// darwin file.
	assert.Equal(t, 4, res.ModulePackages)
	// vzshape converts objc.GetUUID()'s *C.char as vz does.
	assert.Equal(t, 1, res.Suppressed)
	// Errors in dependencies would give their declarations invalid types and
	// silence errors in the module, so the standard library must check
	// cleanly from source for darwin/arm64 with cgo.
	assert.Empty(t, res.DepErrors)

	for _, d := range res.Errors {
		assert.Equal(t, "example.com/dtc/broken", d.Package, "error outside broken: %s", d.Format(""))
		assert.NotContains(t, d.Pos.Filename, "linuxonly")
		assert.NotEqual(t, "probe.go", filepath.Base(d.Pos.Filename), "a //go:build linux file was checked for darwin")
	}
	require.NotEmpty(t, notCaught)
	for _, pos := range notCaught {
		for _, d := range res.Errors {
			assert.False(t, d.Pos.Filename == pos.Filename && d.Pos.Line == pos.Line,
				"FakeImportC was expected to silence %s; update the doc comment if go/types now reports it", d.Format(""))
		}
	}
}

func TestCheckTestFiles(t *testing.T) {
	dir := fixture(t)
	all, _ := wants(t, dir)
	res, err := Check(context.Background(), Options{Dir: dir, Tests: true})
	require.NoError(t, err)
	// The test variant of broken repeats its errors; each is reported once.
	assertReported(t, res.Errors, all, "", "test")
}

func TestCheckCleanPackagePasses(t *testing.T) {
	dir := fixture(t)
	res, err := Check(context.Background(), Options{Dir: dir, Patterns: []string{"./clean", "./vzshape"}, Tests: true})
	require.NoError(t, err)
	assert.Empty(t, res.Errors, formatAll(res.Errors))
	assert.Equal(t, exitClean, res.ExitCode())
	// vzshape/internal/objc comes in as a dependency from the module.
	assert.Equal(t, 3, res.ModulePackages)
}

// TestCheckLinuxControl checks the fixture for linux, where the files
// excluded for darwin build: their mistakes are reported, so their absence
// from the darwin check is due to the build constraints.
func TestCheckLinuxControl(t *testing.T) {
	dir := fixture(t)
	all, _ := wants(t, dir)
	res, err := Check(context.Background(), Options{Dir: dir, GOOS: "linux", GOARCH: "amd64", Tests: true})
	require.NoError(t, err)
	assertReported(t, res.Errors, all, "linux")
}

func TestRunExitStatus(t *testing.T) {
	dir := fixture(t)
	all, _ := wants(t, dir)
	var startVM string
	for _, w := range all {
		if w.kind == "" && strings.Contains(w.re.String(), "not enough arguments in call to startVM") {
			startVM = fmt.Sprintf("%s:%d:", w.pos.Filename, w.pos.Line)
		}
	}
	require.NotEmpty(t, startVM, "the fixture lost its wrong call to startVM")
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stdoutNone bool
		stderr     string
	}{
		{name: "errors", args: []string{"-C", dir}, code: exitErrors, stdout: startVM, stderr: "errors in the module"},
		{name: "clean", args: []string{"-C", dir, "./clean", "./vzshape"}, code: exitClean, stdoutNone: true, stderr: "0 errors in the module"},
		{name: "package without darwin files", args: []string{"-C", dir, "./linuxonly"}, code: exitErrors, stdout: "build constraints exclude all Go files"},
		{name: "bad flag", args: []string{"-no-such-flag"}, code: exitFailed, stdoutNone: true, stderr: "usage: darwin-typecheck"},
		{name: "no module", args: []string{"-C", filepath.Join(dir, "no-such-dir")}, code: exitFailed, stdoutNone: true, stderr: "go list"},
		{name: "help", args: []string{"-h"}, code: exitClean, stderr: "FakeImportC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			assert.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
			assert.Contains(t, stdout.String(), tt.stdout)
			if tt.stdoutNone {
				assert.Empty(t, stdout.String())
			}
			assert.Contains(t, stderr.String(), tt.stderr)
		})
	}
}

// A module that go.mod's replace points at a folder is checked from that
// folder (its declarations: function bodies of dependencies are skipped),
// and a wrong call into it is reported (the want in broken/socket_darwin.go).
func TestCheckReadsReplacedModules(t *testing.T) {
	dir := fixture(t)
	pkgs, err := listPackages(context.Background(), Options{Dir: dir}, "darwin", "arm64")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "vzfork"), listedDir(t, pkgs, "example.com/vzfork"))
	res, err := Check(context.Background(), Options{Dir: dir})
	require.NoError(t, err)
	assert.Empty(t, res.DepErrors)
	found := false
	for _, d := range res.Errors {
		found = found || strings.Contains(d.Msg, "not enough arguments in call to d.Connect")
	}
	assert.True(t, found, "the wrong call into the replaced module:\n%s", formatAll(res.Errors))
}

// listedDir is the folder go list read package path from.
func listedDir(t *testing.T, pkgs []*listedPackage, path string) string {
	t.Helper()
	for _, p := range pkgs {
		if p.ImportPath == path {
			return p.Dir
		}
	}
	t.Fatalf("%s is not among the listed packages", path)
	return ""
}

// TestCheckRepo checks this repository's own packages, tests included, as
// scripts/darwin-typecheck does: vz among their dependencies is the patched
// copy go.mod's replace names, and it checks without an error.
func TestCheckRepo(t *testing.T) {
	testvm.Slow(t, "checks the whole repository and its dependencies from source")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	res, err := Check(context.Background(), Options{Dir: root, Tests: true})
	require.NoError(t, err)
	assert.Empty(t, res.Errors, "darwin/arm64 type errors:\n%s", formatAll(res.Errors))
	assert.NotZero(t, res.ModulePackages)
	pkgs, err := listPackages(context.Background(), Options{Dir: root, Patterns: []string{"./internal/hv/vz"}}, "darwin", "arm64")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "internal", "hv", "vz", "vzpatched"), listedDir(t, pkgs, "github.com/Code-Hex/vz/v3"))
	for _, d := range res.DepErrors {
		assert.NotContains(t, d.Package, "github.com/Code-Hex/vz", "the patched vz must check cleanly")
	}
	t.Logf("%d packages (%d in the module) in %s", res.Packages, res.ModulePackages, res.Duration)
}

func TestDiagnosticFormat(t *testing.T) {
	pos := token.Position{Filename: "/m/a/b_darwin.go", Line: 3, Column: 7}
	tests := []struct {
		name string
		d    Diagnostic
		dir  string
		want string
	}{
		{name: "below dir", d: Diagnostic{Pos: pos, Msg: "boom"}, dir: "/m", want: "a/b_darwin.go:3:7: boom"},
		{name: "outside dir", d: Diagnostic{Pos: pos, Msg: "boom"}, dir: "/other", want: "/m/a/b_darwin.go:3:7: boom"},
		{name: "no dir", d: Diagnostic{Pos: pos, Msg: "boom"}, want: "/m/a/b_darwin.go:3:7: boom"},
		{name: "no position", d: Diagnostic{Package: "example.com/p", Msg: "boom"}, dir: "/m", want: "example.com/p: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.d.Format(tt.dir))
		})
	}
}

func TestParsePosition(t *testing.T) {
	tests := []struct {
		in      string
		want    token.Position
		wantErr bool
	}{
		{in: "a/b.go:3:7", want: token.Position{Filename: "a/b.go", Line: 3, Column: 7}},
		{in: "a/b.go:3", want: token.Position{Filename: "a/b.go", Line: 3}},
		{in: "a/b.go", wantErr: true},
		{in: "a/b.go:x", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parsePosition(tt.in)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestGoVersion(t *testing.T) {
	mod := func(v string) *listedPackage {
		return &listedPackage{Module: &listedModule{Path: "example.com/m", GoVersion: v}}
	}
	assert.Equal(t, "go1.24", goVersion(mod("1.24.0")))
	assert.Equal(t, "go1.22", goVersion(mod("1.22")))
	assert.Equal(t, "go1.16", goVersion(mod("")))
	assert.Regexp(t, `^(go1\.\d+)?$`, goVersion(&listedPackage{}))
}

func TestRecord(t *testing.T) {
	fset := token.NewFileSet()
	file := fset.AddFile("/m/p/a_darwin.go", -1, 100)
	file.SetLines([]int{0, 10, 20})
	pos := file.Pos(12)
	module := &unit{lp: &listedPackage{ImportPath: "example.com/m/p", Module: &listedModule{Main: true}}}
	dep := &unit{lp: &listedPackage{ImportPath: "example.com/dep", Module: &listedModule{}}}
	c := &checker{fset: fset}

	hard := types.Error{Fset: fset, Pos: pos, Msg: "undefined: x"}
	soft := types.Error{Fset: fset, Pos: pos, Msg: `"os" imported and not used`, Soft: true}
	fakeC := types.Error{Fset: fset, Pos: pos, Msg: "cannot convert objc.GetUUID() (value with invalid type) to type *char"}
	syntax := scanner.ErrorList{{Pos: token.Position{Filename: "/m/p/a_darwin.go", Line: 3, Column: 1}, Msg: "expected ';', found x"}}

	for _, err := range []error{hard, soft, fakeC, syntax, errors.New("read failed")} {
		c.record(module, err)
		c.record(dep, err)
	}
	assert.Equal(t, []Diagnostic{
		{Package: "example.com/m/p", Pos: token.Position{Filename: "/m/p/a_darwin.go", Offset: 12, Line: 2, Column: 3}, Msg: "undefined: x"},
		{Package: "example.com/m/p", Pos: token.Position{Filename: "/m/p/a_darwin.go", Offset: 12, Line: 2, Column: 3}, Msg: `"os" imported and not used`},
		{Package: "example.com/m/p", Pos: token.Position{Filename: "/m/p/a_darwin.go", Line: 3, Column: 1}, Msg: "expected ';', found x"},
		{Package: "example.com/m/p", Msg: "read failed"},
	}, module.diags)
	assert.Equal(t, 1, module.suppressed)
	// In a dependency the soft and the fake-C errors do not count.
	assert.Equal(t, 3, dep.depErrors)
	assert.Empty(t, dep.diags)
}

func TestPackagePath(t *testing.T) {
	assert.Equal(t, "example.com/p", packagePath("example.com/p [example.com/p.test]"))
	assert.Equal(t, "example.com/p", packagePath("example.com/p"))
}
