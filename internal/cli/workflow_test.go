package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bench commands the CI workflow runs on a Mac are bench commands this
// qoslab takes: a renamed flag fails here, not on a fork's runner.
func TestWorkflowBenchCommandsParse(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "ci.yml"))
	require.NoError(t, err)
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		_, args, ok := strings.Cut(strings.TrimSpace(line), "bin/qoslab bench ")
		if !ok {
			continue
		}
		found++
		o, err := parseBench(t, nil, strings.Fields(args)...)
		require.NoError(t, err, line)
		assert.NotEmpty(t, o.Targets, line)
	}
	assert.GreaterOrEqual(t, found, 2, "the host bench and the VM attempt")
}
