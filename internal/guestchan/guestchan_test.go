package guestchan

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every value here is written once in the module's Go code: the image, the
// guest's init and the backends all name it through this package, so no
// test needs to keep copies equal.
func TestValuesAreWrittenOnce(t *testing.T) {
	values := []string{strconv.Quote(PortName), strconv.Quote(ConfigPath), strconv.Quote(ScratchDisk)}
	found := map[string][]string{}
	root := filepath.Join("..", "..")
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, v := range values {
			if strings.Contains(string(b), v) {
				found[v] = append(found[v], path)
			}
		}
		return nil
	}))
	for _, v := range values {
		assert.Equal(t, []string{"guestchan.go"}, base(found[v]), "%s is written in %v", v, found[v])
	}
}

func base(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}
