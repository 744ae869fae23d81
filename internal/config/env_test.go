package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// variableName is how the code, scripts, Makefile and CI name qoslab's
// variables and the XDG directories.
var variableName = regexp.MustCompile(`\b(QOSLAB_[A-Z0-9_]*[A-Z0-9]|XDG_[A-Z_]*[A-Z])\b`)

// variablesNamedIn is every variable name in the repository's code,
// scripts, Makefile and CI (the docs are what is checked, not searched).
func variablesNamedIn(t *testing.T, root string) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") && name != ".github" || name == "bin" || name == "testdata" || name == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go", ".sh", ".yml", ".yaml", ".mk":
		default:
			if name != "Makefile" {
				return nil
			}
		}
		b, err := os.ReadFile(path) //nolint:gosec // G304: the repository's own files
		if err != nil {
			return err
		}
		for _, v := range variableName.FindAllString(string(b), -1) {
			rel, _ := filepath.Rel(root, path)
			found[v] = append(found[v], rel)
		}
		return nil
	})
	require.NoError(t, err)
	return found
}

// docs/environment.md lists every variable the repository reads: each
// QOSLAB_* and XDG_* name in the code, scripts, Makefile and CI, and each
// of this package's, as a `name` in its table.
func TestEnvironmentTableListsEveryVariable(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "environment.md"))
	require.NoError(t, err)
	found := variablesNamedIn(t, root)
	require.Contains(t, found, DebianMirrorEnv, "the search finds the variables")
	for _, v := range []string{DebianMirrorEnv, ConfigHomeEnv, CacheHomeEnv, StateHomeEnv, HomeEnv, CargoHomeEnv, NoColorEnv, TermEnv} {
		found[v] = append(found[v], "internal/config/env.go")
	}
	var missing []string
	for v, files := range found {
		if !strings.Contains(string(doc), "`"+v+"`") {
			missing = append(missing, v+" (named in "+strings.Join(files[:min(len(files), 3)], ", ")+")")
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "docs/environment.md does not list them")
}

func TestCargoBin(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	assert.Equal(t, "/opt/cargo/bin", CargoBin(env(map[string]string{"CARGO_HOME": "/opt/cargo", "HOME": "/root"})))
	assert.Equal(t, "/home/me/.cargo/bin", CargoBin(env(map[string]string{"HOME": "/home/me"})))
	assert.Empty(t, CargoBin(env(nil)))
}
