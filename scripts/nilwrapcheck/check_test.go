package main

import (
	"bytes"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// check runs CheckFile on a function body and returns the lines of its
// findings, counted from the body's first line.
func check(t *testing.T, body string) []int {
	t.Helper()
	const head = "package p\n\nimport \"fmt\"\n\nfunc f(ok bool, err, other error, g func() error) error {\n"
	src := head + body + "\n\treturn nil\n}\n"
	found, err := CheckFile(token.NewFileSet(), "p.go", []byte(src))
	require.NoError(t, err)
	var lines []int
	for _, f := range found {
		lines = append(lines, f.Pos.Line-strings.Count(head, "\n"))
	}
	return lines
}

func TestCheckFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want []int // lines of the body with a finding
	}{
		{"the install_darwin.go pattern", `
	if !ok || err != nil {
		return fmt.Errorf("refused: %w", err)
	}`, []int{3}},
		{"reversed and parenthesised", `
	if (nil != err) || !ok {
		return fmt.Errorf("a %d b %w", 1, (err))
	}`, []int{3}},
		{"init statement", `
	if err := g(); err != nil || ok {
		return fmt.Errorf("%w", err)
	}`, []int{3}},
		{"body on err == nil", `
	if err == nil {
		return fmt.Errorf("x: %w", err)
	}`, []int{3}},
		{"conjunction with err == nil", `
	if ok && err == nil {
		return fmt.Errorf("x: %w", err)
	}`, []int{3}},
		{"else of err != nil", `
	if err != nil {
		return err
	} else {
		return fmt.Errorf("x: %w", err)
	}`, []int{5}},
		{"explicit argument index", `
	if !ok || err != nil {
		return fmt.Errorf("%[2]w after %[1]s", "x", err)
	}`, []int{3}},
		{"star width takes an argument", `
	if !ok || err != nil {
		return fmt.Errorf("%*d %w", 3, 4, err)
	}`, []int{3}},
		{"format from literals", `
	if !ok || err != nil {
		return fmt.Errorf("refused " + "here: %w", err)
	}`, []int{3}},
		{"nested if", `
	for {
		if !ok || err != nil {
			if ok {
				return fmt.Errorf("%w", err)
			}
		}
	}`, []int{5}},

		// Fine: each of these wraps an error that cannot be nil there.
		{"err != nil alone", `
	if err != nil {
		return fmt.Errorf("x: %w", err)
	}`, nil},
		{"both terms test err", `
	if err != nil || err != nil {
		return fmt.Errorf("x: %w", err)
	}`, nil},
		{"separate checks", `
	if err != nil {
		return fmt.Errorf("x: %w", err)
	}
	if !ok {
		return fmt.Errorf("refused")
	}`, nil},
		{"err set in the branch", `
	if !ok || err != nil {
		err = g()
		return fmt.Errorf("x: %w", err)
	}`, nil},
		{"another error wrapped", `
	if !ok || err != nil {
		return fmt.Errorf("x: %w", other)
	}`, nil},
		{"err printed with %v", `
	if !ok || err != nil {
		return fmt.Errorf("x: %v", err)
	}`, nil},
		{"%% is no verb", `
	if !ok || err != nil {
		return fmt.Errorf("100%%: %s %w", "a", other)
	}`, nil},
		{"conjunction with err != nil", `
	if ok && err != nil {
		return fmt.Errorf("x: %w", err)
	}`, nil},
		{"later, in a func literal", `
	if !ok || err != nil {
		go func() { _ = fmt.Errorf("%w", err) }()
	}`, nil},
		{"format not a literal", `
	format := "%w"
	if !ok || err != nil {
		return fmt.Errorf(format, err)
	}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, check(t, tc.body))
		})
	}
}

func TestWrapVerbs(t *testing.T) {
	for _, tc := range []struct {
		format string
		want   []int
	}{
		{"%w", []int{0}},
		{"%s: %w", []int{1}},
		{"%%w %w", []int{0}},
		{"%-8.3f %+v %w %w", []int{2, 3}},
		{"%[3]w %[1]s %w", []int{2, 1}},
		{"%*.*f %w", []int{3}},
		{"trailing %", nil},
	} {
		assert.Equal(t, tc.want, wrapVerbs(tc.format), tc.format)
	}
}

// A planted file in a tree, a darwin-only file among them, is found and
// makes the command fail; testdata is skipped.
func TestRunFindsAPlantedCase(t *testing.T) {
	dir := t.TempDir()
	planted := `//go:build darwin && arm64 && cgo

package p

import "fmt"

func validate() (bool, error) { return false, nil }

func f() error {
	if ok, err := validate(); !ok || err != nil {
		return fmt.Errorf("refused: %w", err)
	}
	return nil
}
`
	clean := "package p\n\nimport \"fmt\"\n\nfunc g(err error) error {\n\tif err != nil {\n\t\treturn fmt.Errorf(\"g: %w\", err)\n\t}\n\treturn nil\n}\n"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p", "testdata"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "install_darwin.go"), []byte(planted), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "clean.go"), []byte(clean), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "testdata", "bad.go"), []byte(planted), 0o644))

	var stdout, stderr bytes.Buffer
	code := run([]string{dir}, &stdout, &stderr)
	assert.Equal(t, 1, code, stderr.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 1, stdout.String())
	assert.Contains(t, lines[0], "install_darwin.go:11:10: fmt.Errorf wraps err with %w where err can be nil (the body also runs when !ok, with err nil)")

	require.NoError(t, os.Remove(filepath.Join(dir, "p", "install_darwin.go")))
	stdout.Reset()
	assert.Equal(t, 0, run([]string{dir}, &stdout, &stderr))
	assert.Empty(t, stdout.String())
}

func TestRunRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.go"), []byte("package p\nfunc {"), 0o644))
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run([]string{dir}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "broken.go")
	assert.Equal(t, 2, run([]string{filepath.Join(dir, "missing")}, &stdout, &stderr))
	assert.Equal(t, 2, run([]string{"a", "b"}, &stdout, &stderr))
}
