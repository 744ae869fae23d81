package vz

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// qoslab builds vz from the copy in vzpatched (go.mod's replace), whose
// newVirtioSocketConnection leaves the framework's descriptor to the
// framework: it hands it to fdconn.FromHeld, which duplicates it, and
// neither wraps the original in an *os.File (whose Close, or finalizer,
// would close it) nor closes it; and it retains the VZVirtioSocketConnection
// until the connection's Close releases it, once. fdconn's own tests, run here, show on
// this machine's sockets that the original stays open and that the
// framework's later close of it hits nothing else. See vzpatched/README.md.
func TestVZIsThePatchedCopy(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/Code-Hex/vz/v3").Output()
	require.NoError(t, err)
	var mod struct{ Version, Dir string }
	require.NoError(t, json.Unmarshal(out, &mod))
	want, err := filepath.Abs("vzpatched")
	require.NoError(t, err)
	assert.Equal(t, want, mod.Dir, "go.mod's replace points at the patched copy")
	assert.Equal(t, "v3.7.1", mod.Version, "the release the copy was taken from")

	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filepath.Join(want, "socket.go"), nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	var calls []string
	found := false
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "newVirtioSocketConnection" {
			continue
		}
		found = true
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok {
						calls = append(calls, x.Name+"."+sel.Sel.Name)
					} else {
						calls = append(calls, "."+sel.Sel.Name)
					}
				}
			}
			return true
		})
	}
	require.True(t, found, "no newVirtioSocketConnection in vzpatched/socket.go")
	assert.Contains(t, calls, "fdconn.FromHeld", "the framework's descriptor goes through a duplicate that holds its object")
	assert.Contains(t, calls, "objc.Retain", "the VZVirtioSocketConnection is retained: the framework frees it when the handler returns")
	assert.Contains(t, calls, "objc.Release", "the hold's release is the object's")
	assert.NotContains(t, calls, "os.NewFile", "an *os.File of the framework's descriptor closes it")
	for _, c := range calls {
		assert.False(t, strings.HasSuffix(c, ".Close"), "newVirtioSocketConnection closes nothing: %s", c)
	}

	test := exec.Command("go", "test", "-count=1", "github.com/Code-Hex/vz/v3/internal/fdconn")
	out, err = test.CombinedOutput()
	require.NoError(t, err, "fdconn's tests:\n%s", out)
}
