package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/telemetry"
)

func TestRunInterruptedThenResumed(t *testing.T) {
	t.Parallel()
	dir := binaries(t)
	work := t.TempDir()
	spec := filepath.Join(work, "host.yaml")
	// Default and user-interactive, not background: beside another run's
	// contention spinners (make test on a machine that also runs an
	// experiment) a background (SCHED_IDLE) thread gets crumbs of a CPU,
	// and its 3e7 loops would take the test's minutes to reach the first
	// records; what is tested is the interruption and the resume, which no
	// class changes.
	require.NoError(t, os.WriteFile(spec, []byte(`name: resumable
targets: [host]
matrix:
  - workload: fp
    qos: [default, user-interactive]
    threads: 1-2
    loops: 3e7
repeats: 6
`), 0o644))

	cmd := exec.Command(filepath.Join(dir, "qoslab"), "run", "--spec", spec, "--results", work)
	cmd.Dir = work
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	// Interrupt once a few cell runs are safe on disk.
	var samples string
	require.Eventually(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(work, "resumable-*", results.SamplesFile))
		if len(m) == 0 {
			return false
		}
		samples = m[0]
		b, _ := os.ReadFile(samples)
		return bytes.Count(b, []byte("\n")) >= 6
	}, 5*time.Minute, 20*time.Millisecond, errOut.String()) // a deadline for a hang: a loaded machine only takes longer
	// SIGTERM, as a service manager or a CI timeout sends it.
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, errOut.String())
	assert.Equal(t, 143, exit.ExitCode(), "128 + SIGTERM's 15")
	runDir := filepath.Dir(samples)
	assert.Contains(t, errOut.String(), "qoslab: interrupted by SIGTERM\n")
	assert.Contains(t, errOut.String(), "finish the run with: qoslab run --resume "+runDir, "the hint a failure gives")
	d, err := results.Open(runDir)
	require.NoError(t, err)
	assert.False(t, d.Run.Complete(), "an interrupted run is not complete")
	assert.Nil(t, d.Run.Finished, "nor stamped finished")
	require.NotNil(t, d.Run.Interrupted)
	assert.Equal(t, "interrupted by SIGTERM", d.Run.Error)
	sum, err := os.ReadFile(filepath.Join(runDir, results.SummaryMDFile))
	require.NoError(t, err)
	assert.Contains(t, string(sum), "partial: ", "the summary of a partial run says so")
	before, _, err := results.ReadSamples(samples)
	require.NoError(t, err)
	require.NotEmpty(t, before)
	assert.Less(t, len(before), 2*3*6, "the run was interrupted before it finished")

	_, stderr, code := qoslab(t, dir, "run", "--resume", runDir)
	require.Equal(t, 0, code, stderr)
	after, torn, err := results.ReadSamples(samples)
	require.NoError(t, err)
	assert.Nil(t, torn)
	// 2 classes x (1+2 threads) x 6 repeats, each (cell, repeat, thread) exactly once.
	assert.Len(t, after, 2*3*6)
	seen := map[string]bool{}
	for _, r := range after {
		k := fmt.Sprintf("%s/%d/%d", r.Cell, r.Repeat, r.Index)
		assert.False(t, seen[k], "measured twice: %s", k)
		seen[k] = true
	}
	d, err = results.Open(runDir)
	require.NoError(t, err)
	assert.True(t, d.Run.Complete())
	assert.Len(t, d.Run.Resumed, 1)
	for _, f := range []string{results.SummaryJSONFile, results.SummaryCSVFile, results.SummaryMDFile,
		results.ReportFile, "report.md", filepath.Join(results.PlotsDir, "throughput-fp.png"), results.TelemetryFile} {
		_, err := os.Stat(filepath.Join(runDir, f))
		assert.NoError(t, err, f)
	}
	// Telemetry of both halves of the run, interrupted and resumed, each
	// sample with its cell; the summaries and the report carry it.
	tel, notes, err := telemetry.ReadFile(filepath.Join(runDir, results.TelemetryFile))
	require.NoError(t, err)
	assert.Empty(t, notes)
	require.NotEmpty(t, tel)
	runs := map[string]bool{}
	for _, s := range tel {
		assert.Equal(t, "host", s.Target)
		assert.Equal(t, telemetry.ViewHost, s.View)
		runs[fmt.Sprintf("%s/%d", s.Cell, s.Repeat)] = true
	}
	assert.Len(t, runs, 2*2*6, "every saved cell run sampled, none twice over the resume")
	sum, err = os.ReadFile(filepath.Join(runDir, results.SummaryMDFile))
	require.NoError(t, err)
	assert.Contains(t, string(sum), "<summary>Telemetry</summary>", "summary.md holds the telemetry, folded")
	html, err := os.ReadFile(filepath.Join(runDir, results.ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(html), "<svg")
	assert.Contains(t, string(html), "worker 0")
	csv, err := os.ReadFile(filepath.Join(runDir, results.SummaryCSVFile))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(csv), "target,workload,qos,threads,n,median,min,max,ci_low,ci_high,unit"), string(csv))

	// Resuming a finished run is idempotent: exit 0, nothing measured,
	// the outputs rewritten from the samples, run.json untouched.
	require.NoError(t, os.Remove(filepath.Join(runDir, results.SummaryMDFile)))
	runJSON, err := os.ReadFile(filepath.Join(runDir, results.RunFile))
	require.NoError(t, err)
	_, stderr, code = qoslab(t, dir, "run", "--resume", runDir)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "nothing left to measure")
	assert.FileExists(t, filepath.Join(runDir, results.SummaryMDFile), "rewritten")
	again, _, err := results.ReadSamples(samples)
	require.NoError(t, err)
	assert.Len(t, again, len(after), "nothing measured")
	runJSON2, err := os.ReadFile(filepath.Join(runDir, results.RunFile))
	require.NoError(t, err)
	assert.Equal(t, string(runJSON), string(runJSON2))
}

func TestRunBadSpec(t *testing.T) {
	t.Parallel()
	dir := binaries(t)
	spec := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("name: bad\nmatrix: []\nrepeats: 0\ntargets: [cloud]\n"), 0o644))
	_, stderr, code := qoslab(t, dir, "run", "--spec", spec)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "repeats")
	assert.Contains(t, stderr, "cloud")
}

// A named pipe given as a spec, a config file or a recipe is refused at
// once: opening it used to wait for a writer for good.
func TestInputFilesThatAreNamedPipes(t *testing.T) {
	t.Parallel()
	dir := binaries(t)
	fifo := filepath.Join(t.TempDir(), "input.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	cases := []struct {
		name string
		args []string
		what string
	}{
		{"spec", []string{"run", "--spec", fifo}, "spec " + fifo},
		{"config", []string{"--config", fifo, "specs", "list"}, "config file " + fifo},
		{"recipe", []string{"image", "build", "linux", "--recipe", fifo, "--store", t.TempDir()}, "recipe " + fifo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(dir, "qoslab"), tc.args...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			require.NoError(t, ctx.Err(), "qoslab %s blocked on the named pipe", strings.Join(tc.args, " "))
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%s", out)
			assert.NotZero(t, exit.ExitCode())
			assert.Contains(t, string(out), tc.what+": not a regular file (a named pipe)")
		})
	}
}

// The messages a user met running the fault battery say the right thing,
// and bench refuses what it cannot run before starting anything.
func TestMessagesSayTheRightThing(t *testing.T) {
	t.Parallel()
	dir := binaries(t)
	noCells := []string{"no cells finished", "incomplete:", "booting", "host: "}

	t.Run("spec duration 0", func(t *testing.T) {
		spec := filepath.Join(t.TempDir(), "d0.yaml")
		require.NoError(t, os.WriteFile(spec, []byte("name: d0\ntargets: [host]\nmatrix: [{workload: fp, qos: 9, threads: 1, duration: 0}]\n"), 0o644))
		_, stderr, code := qoslab(t, dir, "run", "--spec", spec, "--results", t.TempDir())
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "matrix[0].duration (line 3): duration 0s: allowed 10ms..1h0m0s")
		assert.NotContains(t, stderr, "loops")
	})

	t.Run("bench --duration 0s", func(t *testing.T) {
		out, stderr, code := qoslab(t, dir, "bench", "--duration", "0s", "--repeat", "1")
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "--duration: duration 0s: allowed 10ms..1h0m0s")
		assert.Empty(t, out, "nothing measured")
		for _, s := range noCells {
			assert.NotContains(t, stderr, s)
		}
	})

	t.Run("bench duration 0s from the environment", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(dir, "qoslab"), "bench", "--repeat", "1")
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "QOSLAB_BENCH_DURATION=0s")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%s", out)
		assert.Equal(t, 2, exit.ExitCode())
		assert.Contains(t, string(out), "QOSLAB_BENCH_DURATION: duration 0s: allowed 10ms..1h0m0s")
	})

	t.Run("bench --image nosuchimage", func(t *testing.T) {
		out, stderr, code := qoslab(t, dir, "bench", "--target", "host,vm", "--image", "nosuchimage", "--image-store", t.TempDir(), "--repeat", "1")
		assert.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, "image nosuchimage is not built")
		assert.Equal(t, 1, strings.Count(stderr, "qoslab image build linux"), "said once: %s", stderr)
		assert.Empty(t, out)
		for _, s := range noCells {
			assert.NotContains(t, stderr, s, "refused before anything starts")
		}
	})

	t.Run("bench --vm-backend vz off Apple silicon", func(t *testing.T) {
		if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
			t.Skip("vz runs here")
		}
		_, stderr, code := qoslab(t, dir, "bench", "--target", "vm", "--vm-backend", "vz", "--repeat", "1")
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "--vm-backend: vz runs on darwin/arm64 only; this is "+runtime.GOOS+"/"+runtime.GOARCH+": use qemu here")
		for _, s := range noCells {
			assert.NotContains(t, stderr, s, "refused before anything starts or boots")
		}
	})

	t.Run("run with vm.backend vz off Apple silicon", func(t *testing.T) {
		if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
			t.Skip("vz runs here")
		}
		spec := filepath.Join(t.TempDir(), "vz.yaml")
		require.NoError(t, os.WriteFile(spec, []byte("name: vz\ntargets: [host, vm]\nvm: {backend: vz}\nmatrix: [{workload: fp, qos: 9, threads: 1, loops: 1e6}]\n"), 0o644))
		results := t.TempDir()
		_, stderr, code := qoslab(t, dir, "run", "--spec", spec, "--results", results)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "vm.backend in the spec: vz runs on darwin/arm64 only")
		entries, err := os.ReadDir(results)
		require.NoError(t, err)
		assert.Empty(t, entries, "no results directory for a run that cannot start")
	})

	t.Run("a symlinked .lock empties nothing", func(t *testing.T) {
		work := t.TempDir()
		spec := filepath.Join(work, "s.yaml")
		require.NoError(t, os.WriteFile(spec, []byte("name: s\ntargets: [host]\nmatrix: [{workload: fp, qos: 9, threads: 1, loops: 1e6}]\nrepeats: 1\ntelemetry_ms: 0\n"), 0o644))
		_, stderr, code := qoslab(t, dir, "run", "--spec", spec, "--results", work)
		require.Equal(t, 0, code, stderr)
		runs, err := filepath.Glob(filepath.Join(work, "s-*"))
		require.NoError(t, err)
		require.Len(t, runs, 1)
		precious := filepath.Join(t.TempDir(), "thesis.tex")
		require.NoError(t, os.WriteFile(precious, []byte("two years\n"), 0o644))
		lock := filepath.Join(runs[0], results.LockFile)
		require.NoError(t, os.Remove(lock))
		require.NoError(t, os.Symlink(precious, lock))
		_, stderr, code = qoslab(t, dir, "run", "--resume", runs[0])
		assert.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, lock+" is a symbolic link, not qoslab's lock file: remove it")
		b, err := os.ReadFile(precious)
		require.NoError(t, err)
		assert.Equal(t, "two years\n", string(b))
	})
}
