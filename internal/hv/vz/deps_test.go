package vz

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The vz backend stays thin: beside hv it may use the guest channel's
// names, the signing checks and the version (and the leaves atomicfile,
// flock and shquote, which import nothing of this module), and nothing that would pull
// the agent, the workloads or the image builder into the code that drives
// Virtualization.framework. Checked for Linux and for the darwin/arm64
// cgo build that really uses the framework.
func TestImportsStayFew(t *testing.T) {
	allowed := []string{"hv", "guestchan", "signing", "version", "atomicfile", "flock", "shquote"}
	for _, env := range [][]string{
		{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"},
		{"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=1"},
	} {
		cmd := exec.Command("go", "list", "-e", "-deps", ".")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		require.NoError(t, err, "%v", env)
		var ours []string
		for _, p := range strings.Fields(string(out)) {
			if rest, ok := strings.CutPrefix(p, "github.com/qoslab/qoslab/internal/"); ok && rest != "hv/vz" {
				ours = append(ours, rest)
				assert.Contains(t, allowed, rest, "%v: hv/vz imports %s", env, rest)
			}
		}
		assert.LessOrEqual(t, len(ours), len(allowed), "%v: %v", env, ours)
	}
}
