package doctor

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/guestvm"
)

// TestChecksSayWhatIsMissingAndTheFix holds doctor to its rule on a
// machine that has nothing: every missing thing is not OK and names the
// command that fixes it, and every backend is either checked or marked as
// not for this platform.
func TestChecksSayWhatIsMissingAndTheFix(t *testing.T) {
	empty := t.TempDir()
	env := guestvm.Env{Store: filepath.Join(empty, "images"), StateHome: empty, CacheDir: empty}
	checks := Checks(context.Background(), filepath.Join(empty, "no-agent"), env, filepath.Join(empty, "kernels"))
	byName := map[string]Check{}
	for _, c := range checks {
		byName[c.Name] = c
		if !c.OK {
			assert.NotEmpty(t, c.Fix, "%s is missing and says no fix", c.Name)
		}
		if c.NotApplicable {
			assert.True(t, c.OK, "%s: a backend not for this platform is not missing", c.Name)
		}
	}
	want := map[string]string{
		"host agent":                      "make build",
		"image " + guestvm.DefaultImage(): "qoslab image build linux",
	}
	for name, fix := range want {
		c, ok := byName[name]
		require.True(t, ok, "no check named %q in %v", name, checks)
		assert.False(t, c.OK, name)
		assert.Equal(t, fix, c.Fix, name)
	}
	kernel := checks[len(checks)-2]
	assert.Contains(t, kernel.Name, "guest kernel")
	if !kernel.OK {
		assert.Equal(t, "qoslab image fetch-kernel --arch "+runtime.GOARCH, kernel.Fix)
	}
}
