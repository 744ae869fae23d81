// Package ciworkflow holds the test that keeps .github/workflows/ci.yml
// doing what the README says it does; actionlint (make test) checks that
// GitHub would run it.
package ciworkflow

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	If        string            `yaml:"if"`
	RunsOn    labels            `yaml:"runs-on"`
	Container string            `yaml:"container"`
	Env       map[string]string `yaml:"env"`
	Steps     []step            `yaml:"steps"`
}

// labels is runs-on, written as one label or a list of them.
type labels []string

func (l *labels) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = labels{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*l = list
	return nil
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

// GitHub's hosted macOS runner: what a Mac user runs first, and the Mac's
// own calls as tests; no VM, since the runner is a VM itself and GitHub
// documents that nested virtualization is not supported there. Nothing in
// it may fail without failing the job.
func TestMacOSJob(t *testing.T) {
	w, _ := load(t)
	j, ok := w.Jobs["macos"]
	require.True(t, ok, "a macos job")
	require.Len(t, j.RunsOn, 1)
	assert.NoError(t, hostedMacLabel(j.RunsOn[0]))
	assert.Equal(t, "${{ vars.QOSLAB_DEBIAN_MIRROR }}", j.Env["QOSLAB_DEBIAN_MIRROR"], "the mirror is the fork's variable")

	setup, ok := runs(j, `^make setup$`)
	require.True(t, ok, "make setup")
	assert.Equal(t, "${{ vars.QOSLAB_DEBIAN_MIRROR != '' }}", setup.If, "only with a mirror")
	without, ok := runs(j, `QOSLAB_DEBIAN_MIRROR`)
	require.True(t, ok)
	assert.Equal(t, "${{ vars.QOSLAB_DEBIAN_MIRROR == '' }}", without.If)
	assert.Contains(t, without.Run, "::warning", "an unset mirror is said, not silent")

	for _, re := range []string{`^go test -count=1 \./\.\.\.$`, `^go test .*-run 'OnThisMac\$'`, `^make build$`, `grep -q com\.apple\.security\.virtualization$`, `^bin/qoslab bench --target host `} {
		s, ok := runs(j, re)
		if assert.True(t, ok, re) {
			assert.Empty(t, s.If, "%s runs without a mirror too", re)
		}
	}
	for _, s := range j.Steps {
		assert.False(t, s.ContinueOnError, "%q may not fail quietly: the job says what it checks", s.Name)
	}
	_, vm := runs(j, `--target [a-z,]*vm`)
	assert.False(t, vm, "no VM on a hosted runner: nested virtualization is not supported there")
	_, vm = runs(j, `^make image$`)
	assert.False(t, vm)
}

// retiredMacLabels are hosted macOS labels GitHub no longer serves: a job
// asking for one is queued and never starts, which no check of the YAML
// sees. macos-12 and macos-13 went first (macos-13 was Intel too); the macOS 14
// images on 2026-11-02, after brownouts in October (actions/runner-images
// issue 13518).
var retiredMacLabels = map[string]bool{"macos-12": true, "macos-13": true, "macos-14": true}

// hostedMacLabel says whether label names a hosted Apple silicon runner
// GitHub serves: macos-15 or newer (macos-26 follows 15), with the
// optional -xlarge or -arm64 suffix, never a retired image.
func hostedMacLabel(label string) error {
	m := regexp.MustCompile(`^(macos-[0-9]+)(-xlarge|-arm64)?$`).FindStringSubmatch(label)
	if m == nil {
		return fmt.Errorf("runs-on %q is not a hosted macOS label (macos-15 or newer, optionally -xlarge or -arm64)", label)
	}
	if retiredMacLabels[m[1]] {
		return fmt.Errorf("runs-on %q: GitHub has retired the %s images; use macos-15 or newer", label, m[1])
	}
	if n, _ := strconv.Atoi(strings.TrimPrefix(m[1], "macos-")); n < 15 {
		return fmt.Errorf("runs-on %q: not served (macos-15 or newer is)", label)
	}
	return nil
}

func TestHostedMacLabel(t *testing.T) {
	for _, tc := range []struct {
		label string
		ok    bool
	}{
		{"macos-15", true},
		{"macos-15-xlarge", true},
		{"macos-15-arm64", true},
		{"macos-26", true},
		{"macos-14", false},
		{"macos-14-xlarge", false},
		{"macos-13", false},
		{"macos-12", false},
		{"macos-latest", false},
		{"ubuntu-24.04", false},
	} {
		t.Run(tc.label, func(t *testing.T) {
			err := hostedMacLabel(tc.label)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

// The README names the label the job runs on, and no retired one.
func TestREADMENamesTheMacOSJobsLabel(t *testing.T) {
	w, _ := load(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	label := w.Jobs["macos"].RunsOn[0]
	assert.Contains(t, string(readme), "**macos** (`"+label+"`", "the README's CI section names the hosted job's label")
	for l := range retiredMacLabels {
		assert.NotContains(t, string(readme), "`"+l+"`", "the README names a retired runner label")
	}
}

// The step that runs the Mac's own tests names packages that hold them, and
// every such test of the repository is in one of them: a renamed test or
// a new one cannot leave the step running nothing ("no tests to run"
// passes).
func TestMacOSJobRunsEveryOnThisMacTest(t *testing.T) {
	w, _ := load(t)
	s, ok := runs(w.Jobs["macos"], `^go test .*-run 'OnThisMac\$'`)
	require.True(t, ok)
	var line string
	for _, l := range strings.Split(s.Run, "\n") {
		if strings.Contains(l, "OnThisMac") {
			line = strings.TrimSpace(l)
		}
	}
	var pkgs []string
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "./") {
			pkgs = append(pkgs, filepath.Clean(f))
		}
	}
	require.NotEmpty(t, pkgs, line)

	onThisMac := regexp.MustCompile(`(?m)^func (Test\w*OnThisMac)\(t \*testing\.T\)`)
	found := map[string][]string{} // package directory: its tests
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, m := range onThisMac.FindAllStringSubmatch(string(b), -1) {
			found[rel] = append(found[rel], m[1])
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, found)
	for dir, tests := range found {
		assert.Contains(t, pkgs, dir, "%v are not run by the macOS job's step", tests)
	}
	for _, p := range pkgs {
		assert.NotEmpty(t, found[p], "%s has no Test...OnThisMac", p)
	}
}

// The VM job runs only on a self-hosted Apple silicon Mac, which the
// repository variable QOSLAB_MAC_RUNNER names; unset, the job is off. There
// the VM bench must pass.
func TestMacOSVMJobOnlyOnASelfHostedMac(t *testing.T) {
	w, text := load(t)
	j, ok := w.Jobs["macos-vm"]
	require.True(t, ok, "a macos-vm job")
	assert.Equal(t, "${{ vars.QOSLAB_MAC_RUNNER != '' }}", j.If, "off unless the variable is set")
	assert.Equal(t, labels{"self-hosted", "macOS", "ARM64", "${{ vars.QOSLAB_MAC_RUNNER }}"}, j.RunsOn,
		"a self-hosted Apple silicon Mac, the one the variable names")
	assert.Equal(t, "${{ vars.QOSLAB_DEBIAN_MIRROR }}", j.Env["QOSLAB_DEBIAN_MIRROR"])
	mirror, ok := runs(j, `::error`)
	require.True(t, ok, "a missing mirror fails the job, saying so")
	assert.Equal(t, "${{ vars.QOSLAB_DEBIAN_MIRROR == '' }}", mirror.If)
	for _, re := range []string{`^make setup$`, `^make image$`, `^bin/qoslab bench --target host,vm `} {
		s, ok := runs(j, re)
		if assert.True(t, ok, re) {
			assert.Empty(t, s.If, re)
		}
	}
	for _, s := range j.Steps {
		assert.False(t, s.ContinueOnError, "%q must pass on a real Mac", s.Name)
	}
	for name, other := range w.Jobs {
		if name != "macos-vm" {
			_, vm := runs(other, `--target [a-z,]*vm`)
			assert.False(t, vm && strings.HasPrefix(name, "macos"), "%s boots a VM on macOS outside the self-hosted job", name)
		}
	}
	assert.Contains(t, text, "nested virtualization is not supported", "the workflow says why")

	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := strings.Join(strings.Fields(string(b)), " ") // its lines rewrapped
	// (Not assert.Contains: it would print the whole README.)
	assert.True(t, strings.Contains(readme, "QOSLAB_MAC_RUNNER"), "the README says how to turn the VM job on")
	assert.True(t, strings.Contains(readme, "nested virtualization is not supported"), "the README says why the hosted runner boots no VM")
	assert.False(t, strings.Contains(readme, "may be refused"), "not a maybe: the hosted runner cannot")
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
