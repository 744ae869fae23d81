package image

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/image/debkernel"
)

// Where the kernel comes from: the recipe's kernel.mirror, else the
// variable, else the machine's apt sources; with none, an error naming what
// to set.
func TestKernelSourcesPrecedence(t *testing.T) {
	apt := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(apt, "sources.list"), []byte("deb http://apt.example/debian bookworm main\n"), 0o644))
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	r := DefaultRecipe()
	got, from, err := KernelSources(r, env(nil), apt)
	require.NoError(t, err)
	assert.Equal(t, []debkernel.Source{{URI: "http://apt.example/debian", Suite: "bookworm"}}, got)
	assert.Contains(t, from, "apt sources")

	got, from, err = KernelSources(r, env(map[string]string{MirrorEnv: "http://var.example/debian"}), apt)
	require.NoError(t, err)
	assert.Equal(t, []debkernel.Source{{URI: "http://var.example/debian", Suite: "stable"}}, got)
	assert.Equal(t, MirrorEnv, from)

	r.Kernel.Mirror, r.Kernel.Suite = "http://recipe.example/debian", "trixie"
	got, from, err = KernelSources(r, env(map[string]string{MirrorEnv: "http://var.example/debian"}), apt)
	require.NoError(t, err)
	assert.Equal(t, []debkernel.Source{{URI: "http://recipe.example/debian", Suite: "trixie"}}, got)
	assert.Equal(t, "kernel.mirror", from)

	_, _, err = KernelSources(DefaultRecipe(), env(nil), t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set kernel.mirror in the recipe, or QOSLAB_DEBIAN_MIRROR")
}

// A recipe may name the mirror and suite; other keys stay errors.
func TestRecipeKernelMirrorKeys(t *testing.T) {
	assert.Empty(t, DefaultRecipe().Kernel.Mirror, "the built-in recipe names no mirror: it is configuration")
	dir := t.TempDir()
	p := filepath.Join(dir, "r.yaml")
	require.NoError(t, os.WriteFile(p, []byte("name: x\narch: arm64\nkernel:\n  source: debian\n  mirror: http://m.example/debian\n  suite: bookworm\n"), 0o644))
	r, err := LoadRecipe(p)
	require.NoError(t, err)
	assert.Equal(t, "http://m.example/debian", r.Kernel.Mirror)
	assert.Equal(t, "bookworm", r.Kernel.Suite)
	require.NoError(t, os.WriteFile(p, []byte("name: x\narch: arm64\nkernel:\n  source: debian\n  mirrors: x\n"), 0o644))
	_, err = LoadRecipe(p)
	assert.Error(t, err, "an unknown key is still refused")
}

// Fetching the kernel needs no guest agent (make setup fetches it before
// anything is built); building the image does.
func TestKernelOptionsNeedNoAgent(t *testing.T) {
	env := func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }
	o, err := BuildSettings{Arch: "arm64"}.KernelOptions(env)
	require.NoError(t, err, "no agent is looked for")
	assert.Equal(t, "arm64", o.Arch)
	assert.NotEmpty(t, o.KernelCacheDir)
	assert.Empty(t, o.AgentPath)
	agentPath := filepath.Join(t.TempDir(), "qoslab-agent")
	b, err := BuildSettings{Arch: "arm64", GuestAgent: agentPath}.Options(env)
	require.NoError(t, err)
	assert.Equal(t, agentPath, b.AgentPath, "a build takes its agent")
}

// Off a terminal the download is reported at each quarter, once each.
func TestDownloadProgressLines(t *testing.T) {
	var b strings.Builder
	report := downloadProgress(&b)
	for done := int64(0); done <= 100; done += 5 {
		report(done, 100)
	}
	assert.Equal(t, "kernel: downloaded 25% of 0.0 MiB\nkernel: downloaded 50% of 0.0 MiB\nkernel: downloaded 75% of 0.0 MiB\nkernel: downloaded 100% of 0.0 MiB\n", b.String())
}
