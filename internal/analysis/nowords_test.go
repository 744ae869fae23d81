package analysis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// analysis takes numbers and gives values (kinds, numbers, cells), never
// English: package render words them. Its code formats no text (no fmt,
// no strings.Join) and holds no phrase but the tokens its JSON writes,
// declared as constants of their own types (Reading, SpeedGap, ...).
func TestAnalysisHoldsNoWords(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var found []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		found = append(found, wordsIn(t, path)...)
	}
	assert.Empty(t, found, "word it in package render, from a value analysis returns")
}

// phrasesAllowed are the phrases that are another library's convention,
// by file and phrase, with why.
var phrasesAllowed = map[string]string{
	"float.go number ": "encoding/json's UnmarshalTypeError.Value says what the JSON held so: \"number 1e999\"",
}

// wordsIn are the places in the Go file at path that make text: a call
// that formats or joins it, or a phrase (a string with a space in it)
// outside a constant declaration.
func wordsIn(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path) //nolint:gosec // G304: the package's own files
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	require.NoError(t, err)
	var out []string
	at := func(n ast.Node, what string) { out = append(out, fset.Position(n.Pos()).String()+": "+what) }
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "fmt" {
			at(im, `imports "fmt"`)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			return n.Tok != token.CONST
		case *ast.Field:
			return false // struct tags
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "strings" && sel.Sel.Name == "Join" {
					at(n, "joins text")
				}
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && strings.Contains(s, " ") && phrasesAllowed[path+" "+s] == "" {
				at(n, "a phrase: "+strconv.Quote(s))
			}
		}
		return true
	})
	return out
}
