package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every constructed results directory (testdata/results/constructed, a
// run written by hand for a case the verdict or the findings once got
// wrong) gives, through `qoslab results show --format md DIR` (its
// summary.md, whose lines the want.txt files quote), each line its want.txt
// lists with "+ " and none of the text it lists with "- "; a damaged one
// fails with the error its "! " line gives.
func TestConstructedFixtures(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "results", "constructed")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(root, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			want, err := os.Open(filepath.Join(dir, "want.txt"))
			require.NoError(t, err)
			defer want.Close()
			streams, out, _ := testIO()
			cmd := NewCmdRoot(NewFactory(streams))
			cmd.SetArgs([]string{"results", "show", "--format", "md", dir})
			runErr := cmd.Execute()
			lines := strings.Split(out.String(), "\n")
			checks, refused := 0, false
			sc := bufio.NewScanner(want)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				l := sc.Text()
				switch {
				case strings.HasPrefix(l, "! "):
					// A damaged run: the command refuses it with this error.
					require.Error(t, runErr, "results show %s refuses the damaged run", e.Name())
					assert.Contains(t, runErr.Error(), l[2:])
					refused = true
				case strings.HasPrefix(l, "+ "):
					assert.True(t, slices.Contains(lines, l[2:]), "results show %s prints the line\n%s\ngot:\n%s", e.Name(), l[2:], out.String())
				case strings.HasPrefix(l, "- "):
					assert.NotContains(t, out.String(), l[2:])
				default:
					continue
				}
				checks++
			}
			require.NoError(t, sc.Err())
			if !refused {
				require.NoError(t, runErr)
			}
			assert.Positive(t, checks, "want.txt checks something")
		})
	}
	assert.GreaterOrEqual(t, n, 15, "the constructed fixtures are there")
}
