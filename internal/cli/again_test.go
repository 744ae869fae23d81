package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/spec"
)

// dryRunEnv is a home where a dry run finds nothing built or cached, and
// a PATH with no QEMU: a dry run needs none.
func dryRunEnv(t *testing.T) map[string]string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("PATH", t.TempDir())
	return map[string]string{"HOME": home, "XDG_CACHE_HOME": filepath.Join(home, "cache"), "XDG_STATE_HOME": filepath.Join(home, "state")}
}

// Every spec a run under testdata/results recorded can be run again: it
// passes validation, written as a spec file (spec.Encode) it reads back as
// the same spec, and `run --again DIR --dry-run` plans it with a new seed,
// which it prints.
func TestRunAgainEveryRecordedSpec(t *testing.T) {
	runs, err := filepath.Glob("../../testdata/results/*/run.json")
	require.NoError(t, err)
	more, err := filepath.Glob("../../testdata/results/*/*/run.json")
	require.NoError(t, err)
	runs = append(runs, more...)
	require.Greater(t, len(runs), 10, "the recorded runs are found")
	var dirs []string
	for _, p := range runs {
		dir, err := filepath.Abs(filepath.Dir(p))
		require.NoError(t, err)
		dirs = append(dirs, dir)
	}
	env := dryRunEnv(t)
	t.Chdir(t.TempDir())
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s, err := experiment.RecordedSpec(dir)
			require.NoError(t, err)
			require.NoError(t, s.Validate())
			b, err := spec.Encode(s)
			require.NoError(t, err)
			back, err := spec.ParseSpec(b, "again")
			require.NoError(t, err, "%s", b)
			back.Quick = s.Quick // no key says a spec was shrunk: its values are
			assert.Equal(t, s, back, "%s", b)

			out, stderr, code := runRoot(t, env, "run", "--again", dir, "--dry-run")
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, out, "(the spec "+dir+" recorded")
			if s.Order == spec.OrderInterleaved {
				assert.Regexp(t, regexp.MustCompile(`again from .*, with a new seed: \d+`), stderr)
				assert.Regexp(t, regexp.MustCompile(`recorded, seed \d+\)`), out)
				assert.NotContains(t, out, "one example", "the order shown is the one the run would use")
			}
		})
	}
}

// A fresh run records its spec twice: as applied (spec) and as a spec
// file (spec_file) that reads back as the same spec; --again plans it.
func TestRunAgainAFreshRun(t *testing.T) {
	env := dryRunEnv(t)
	t.Chdir(t.TempDir())
	for _, name := range spec.DefaultSpecNames() {
		t.Run(name, func(t *testing.T) {
			s, err := spec.DefaultSpec(name)
			require.NoError(t, err)
			d, applied, err := experiment.CreateRun("qoslab-results", spec.Shrink(s), time.Now())
			require.NoError(t, err)
			d.Unlock()
			require.NotEmpty(t, d.Run.SpecFile)
			back, err := spec.ParseSpec([]byte(d.Run.SpecFile), "again")
			require.NoError(t, err, d.Run.SpecFile)
			back.Quick = applied.Quick
			assert.Equal(t, applied, back, d.Run.SpecFile)
			assert.NotContains(t, d.Run.SpecFile, "_ns")

			out, stderr, code := runRoot(t, env, "run", "--again", filepath.Base(d.Path), "--dry-run")
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, out, "(the spec "+d.Path+" recorded")
		})
	}
}

// --again takes a run's name under --results as well as its path, and
// refuses what would change which spec runs; --repeats changes its repeats.
func TestRunAgainFlags(t *testing.T) {
	env := dryRunEnv(t)
	src, err := filepath.Abs("../../testdata/results/linux-contention")
	require.NoError(t, err)
	work := t.TempDir()
	t.Chdir(work)
	require.NoError(t, os.CopyFS(filepath.Join(work, "qoslab-results", "contention-x"), os.DirFS(src)))

	out, stderr, code := runRoot(t, env, "run", "--again", "contention-x", "--dry-run", "--repeats", "12")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "(the spec "+filepath.Join("qoslab-results", "contention-x")+" recorded")
	assert.Contains(t, out, "(12 repeats)")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--again", "nowhere"}, `--again "nowhere": no such results directory, here or under qoslab-results`},
		{[]string{"--again", "contention-x", "--spec", "x.yaml"}, "--again and --spec exclude each other"},
		{[]string{"--again", "contention-x", "--default", "contention"}, "--again and --default exclude each other"},
		{[]string{"--again", "contention-x", "--resume", "y"}, "--again and --resume exclude each other"},
		{[]string{"--again", "contention-x", "--quick"}, "--again and --quick exclude each other"},
		{[]string{"--repeats", "0"}, "--repeats 0: allowed 1..1000"},
		{[]string{"--repeats", "3", "--resume", "y"}, "--repeats and --resume exclude each other"},
	} {
		_, stderr, code := runRoot(t, env, append([]string{"run", "--dry-run"}, c.args...)...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
	}
}

// --repeats replaces the spec's repeats; a max_repeats at its default (3
// times the repeats) follows them, one given stands, and --max-repeats
// sets it whatever the spec says.
func TestRunRepeats(t *testing.T) {
	s, err := spec.DefaultSpec("contention")
	require.NoError(t, err)
	require.Equal(t, 6, s.Repeats)
	require.Equal(t, 18, s.MaxRepeats)
	for _, c := range []struct {
		name             string
		maxRepeats       int
		o                runOptions
		repeats, wantMax int
		wantErr          string
	}{
		{"the default follows", 18, runOptions{Repeats: optionalInt{12, true}}, 12, 36, ""},
		{"none stays none", 0, runOptions{Repeats: optionalInt{12, true}}, 12, 0, ""},
		{"a cap given stands", 20, runOptions{Repeats: optionalInt{12, true}}, 12, 20, ""},
		{"--max-repeats sets it", 18, runOptions{Repeats: optionalInt{12, true}, MaxRepeats: optionalInt{24, true}}, 12, 24, ""},
		{"a cap below is refused", 10, runOptions{Repeats: optionalInt{12, true}}, 0, 0,
			"--repeats 12: the spec's max_repeats 10: allowed 0 (add no repeats) or 12..1000 (at least the spec's repeats, 12): give --max-repeats too"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := s
			s.MaxRepeats = c.maxRepeats
			err := c.o.applyMaxRepeats(&s)
			if c.wantErr != "" {
				assert.EqualError(t, err, c.wantErr)
				assert.True(t, isUsageError(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.repeats, s.Repeats)
			assert.Equal(t, c.wantMax, s.MaxRepeats)
			require.NoError(t, s.Validate())
		})
	}

	var run *runOptions
	cmd := newCmdRun(testFactory(t, nil), func(_ context.Context, o *runOptions) error { run = o; return nil })
	cmd.SetArgs([]string{"--repeats", "12"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, optionalInt{N: 12, Given: true}, run.Repeats)
}
