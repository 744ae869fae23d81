// Package ciworkflow holds the test that keeps .github/workflows/ci.yml
// doing what the README says it does; actionlint (make test) checks that
// GitHub would run it.
package ciworkflow

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

type workflow struct {
	Jobs map[string]job `yaml:"jobs"`
}

type job struct {
	RunsOn    string            `yaml:"runs-on"`
	Container string            `yaml:"container"`
	Env       map[string]string `yaml:"env"`
	Steps     []step            `yaml:"steps"`
}

type step struct {
	Name            string `yaml:"name"`
	If              string `yaml:"if"`
	Run             string `yaml:"run"`
	Uses            string `yaml:"uses"`
	ContinueOnError bool   `yaml:"continue-on-error"`
}

func load(t *testing.T) (workflow, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "ci.yml"))
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(b, &w))
	return w, string(b)
}

// runs finds the step whose script has a line matching re.
func runs(j job, re string) (step, bool) {
	r := regexp.MustCompile(re)
	for _, s := range j.Steps {
		for _, l := range strings.Split(s.Run, "\n") {
			if r.MatchString(strings.TrimSpace(l)) {
				return s, true
			}
		}
	}
	return step{}, false
}

func TestLinuxJobIsTheREADMEsTestCommand(t *testing.T) {
	w, _ := load(t)
	j, ok := w.Jobs["linux"]
	require.True(t, ok, "a linux job")
	assert.True(t, strings.HasPrefix(j.Container, "debian:"), "a Debian machine, as the README's: %q", j.Container)
	s, ok := runs(j, `^make setup test$`)
	require.True(t, ok, "it runs make setup test")
	assert.Empty(t, s.If)
	assert.False(t, s.ContinueOnError)
	assert.Equal(t, "1", j.Env["QOSLAB_REQUIRE_VM"], "a missing QEMU fails, as in .ci/run")
	assert.Equal(t, "1", j.Env["QOSLAB_REQUIRE_FLEET"])

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(readme), "\n    make setup test\n", "the README's test command is the job's")
}

func TestMacOSJob(t *testing.T) {
	w, _ := load(t)
	j, ok := w.Jobs["macos"]
	require.True(t, ok, "a macos job")
	// macos-14 and later run on Apple silicon; macos-13 is Intel.
	assert.Regexp(t, `^macos-(1[4-9]|[2-9][0-9])(-xlarge)?$`, j.RunsOn)
	assert.Equal(t, "${{ vars.QOSLAB_DEBIAN_MIRROR }}", j.Env["QOSLAB_DEBIAN_MIRROR"], "the mirror is the fork's variable")

	setup, ok := runs(j, `^make setup$`)
	require.True(t, ok, "make setup")
	assert.Equal(t, "${{ vars.QOSLAB_DEBIAN_MIRROR != '' }}", setup.If, "only with a mirror")
	without, ok := runs(j, `QOSLAB_DEBIAN_MIRROR`)
	require.True(t, ok)
	assert.Equal(t, "${{ vars.QOSLAB_DEBIAN_MIRROR == '' }}", without.If)
	assert.Contains(t, without.Run, "::warning", "an unset mirror is said, not silent")

	for _, re := range []string{`^go test -count=1 \./\.\.\.$`, `^make build$`, `grep -q com\.apple\.security\.virtualization$`, `^bin/qoslab bench --target host `} {
		s, ok := runs(j, re)
		if assert.True(t, ok, re) {
			assert.False(t, s.ContinueOnError, "%s must pass", re)
			assert.Empty(t, s.If, "%s runs without a mirror too", re)
		}
	}
	vm, ok := runs(j, `^bin/qoslab bench --target host,vm `)
	require.True(t, ok, "a VM attempt")
	assert.True(t, vm.ContinueOnError, "nested vz may be refused on GitHub's runners: it may fail")
	assert.Equal(t, "${{ vars.QOSLAB_DEBIAN_MIRROR != '' }}", vm.If)
}

func TestNoHostNames(t *testing.T) {
	_, text := load(t)
	assert.NotContains(t, text, "://", "no URL: a mirror is the fork's configuration")
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "- uses:") || strings.HasPrefix(l, "uses:") {
			assert.Regexp(t, `uses: actions/[a-z-]+@v[0-9]+$`, l, "GitHub's own actions, pinned to a major")
		}
	}
}
