package termcolor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is the repository's module path: a selector of a package under
// it names qoslab's own words.
const module = "github.com/qoslab/qoslab/"

// matchers are the strings functions that find words in text.
var matchers = map[string]bool{
	"HasPrefix": true, "HasSuffix": true, "Contains": true, "CutPrefix": true, "CutSuffix": true,
	"TrimPrefix": true, "TrimSuffix": true, "Index": true,
}

// markers are the words that open a message's kind: a line is a warning,
// a note or a caveat by its value (termcolor.Warn, experiment.Note), never
// by these.
var markers = []string{"warning:", "note:", "caveat:", "host_qos:", "telemetry"}

// wordsRead are the matches of words that are no message of qoslab's (a
// flag's name, a path, a mark the guest prints for the host to find) or
// that are another program's or library's, which says them in no other
// way: by file and the literal or the constant matched, with why.
var wordsRead = map[string]string{
	"internal/signing/host.go not signed at all":               "codesign's words",
	"internal/spec/spec.go yaml: ":                             "the YAML library's error prefix",
	"internal/image/recipe.go yaml: ":                          "the YAML library's error prefix",
	"scripts/darwintypecheck/check.go invalid operand":         "go/types' words",
	"scripts/darwintypecheck/check.go invalid type":            "go/types' words",
	"internal/cli/imagecmd.go image.InsecureUnsignedIndexFlag": "a flag's name, not a message",
	"internal/image/initramfs.go guestchan.ConfigPath":         "a path, not a message",
	"internal/hv/qemu/vzmodel.go guestchan.ServingMark":        "the mark the guest's agent prints on the console, which is all the host can read of it then",
}

// No package finds what another said by its words: not a message's kind
// by its prefix ("warning:", "note:", "caveat:"), not another package's
// text constant, not an error's or a reason's words. What one package
// must know of another's message is a value: a kind (experiment.Note), a
// typed error (errors.As), a warning written as one (termcolor.Warn).
func TestNoPackageReadsAnothersWords(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		found = append(found, wordsReadIn(t, path, filepath.ToSlash(rel))...)
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found, "say it with a value (a kind, a typed error, termcolor.Warn), not with words to be found")
}

// wordsReadIn are the places in the Go file at path (rel from the
// repository's root) that find a message by its words.
func wordsReadIn(t *testing.T, path, rel string) []string {
	t.Helper()
	src, err := os.ReadFile(path) //nolint:gosec // G304: the repository's own files
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	require.NoError(t, err, rel)
	own := map[string]bool{} // the names of qoslab's packages this file imports
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if !strings.HasPrefix(p, module) {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		own[name] = true
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !matchers[sel.Sel.Name] {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "strings" {
			return true
		}
		at := func(why string) { out = append(out, fset.Position(call.Pos()).String()+": "+why) }
		message := len(call.Args) > 0 && readsAMessage(call.Args[0])
		for _, a := range call.Args {
			switch a := a.(type) {
			case *ast.BasicLit:
				s, _ := strconv.Unquote(a.Value)
				if wordsRead[rel+" "+s] != "" {
					continue
				}
				for _, m := range markers {
					if strings.Contains(s, m) {
						at("a message's kind found by " + strconv.Quote(m))
					}
				}
				if message && s != "" {
					at("words found in a message (an error's text, a reason): " + strconv.Quote(s))
				}
			case *ast.SelectorExpr:
				if pkg, ok := a.X.(*ast.Ident); ok && own[pkg.Name] && wordsRead[rel+" "+pkg.Name+"."+a.Sel.Name] == "" {
					at("another package's text found: " + pkg.Name + "." + a.Sel.Name)
				}
			}
		}
		return true
	})
	return out
}

// readsAMessage says whether e is a message's text: an error's (x.Error())
// or a field that holds one (a reason, notes, a message).
func readsAMessage(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Error" && len(e.Args) == 0
	case *ast.SelectorExpr:
		switch e.Sel.Name {
		case "Reason", "Notes", "Note", "Message", "Msg", "Text":
			return true
		}
	}
	return false
}
