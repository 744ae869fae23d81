package summary

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// judging are the calls that judge subsumption: analysis's, and this
// package's without a run (Verdicts, which takes margins and looks).
var judging = regexp.MustCompile(`\b(analysis\.Subsumption|analysis\.SubsumptionAt|summary\.Verdicts)\(`)

// mayJudge are the files outside analysis and summary that judge, and why.
var mayJudge = map[string]string{
	// The run deciding, between blocks of repeats, whether to take more:
	// at the schedule it runs, before there is a run to read back.
	"internal/experiment/looks.go": "the run's own looks",
}

// A run's verdicts are decided once, here (RunVerdicts, with the run's
// margins, looks and caveats): report, compare, bench and results show
// take them and never judge again, so no view of a run says another
// answer or drops a caveat.
func TestVerdictsAreDecidedHere(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var found []string
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/analysis/") || strings.HasPrefix(rel, "internal/results/summary/") || mayJudge[rel] != "" {
			return nil
		}
		b, err := os.ReadFile(path) //nolint:gosec // G304: the repository's own files
		if err != nil {
			return err
		}
		if m := judging.FindString(string(b)); m != "" {
			found = append(found, rel+": "+m)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found, "take the run's verdicts from summary (Of, RunVerdicts, NoVerdictReason)")
}
