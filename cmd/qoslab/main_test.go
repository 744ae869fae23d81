package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/testvm"
)

// built is the one build of qoslab and qoslab-agent that the package's
// tests share: go build links each of them in seconds even from a warm
// cache, and some fifteen tests need them.
var built struct {
	once sync.Once
	dir  string
	err  error
}

// TestMain removes what the tests shared once they have all run.
//
// Every test of the package runs in parallel with the others (go test runs
// as many at once as -parallel, GOMAXPROCS by default): most of their time
// is one emulated CPU, or one ansible-playbook, each using one host CPU.
// None changes the process's environment, working directory or signal
// handling; each has its own binaries (so processesRunning sees only its
// own), temporary directories, image store (qemuOf finds its QEMU by it),
// ports and fleet key. Subtests run one after the other.
func TestMain(m *testing.M) {
	code := m.Run()
	stopShared()
	os.Exit(code)
}

// stopShared ends what the tests shared: the build, the guest image and the
// fleet's sshd.
func stopShared() {
	stopFleetSSHD()
	for _, d := range []string{built.dir, sharedImage.root} {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
}

// buildBinaries builds qoslab and qoslab-agent side by side into a new
// directory, as `make build` does.
func buildBinaries() (string, error) {
	dir, err := os.MkdirTemp("", "qoslab-test-bin-")
	if err != nil {
		return "", err
	}
	for pkg, name := range map[string]string{".": "qoslab", "../../guest/agent": "qoslab-agent"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return dir, fmt.Errorf("go build %s: %w: %s", pkg, err, out)
		}
	}
	return dir, nil
}

// binaries gives the test qoslab and qoslab-agent side by side in a
// directory of its own: copies of the package's one build, so that the
// processes running from it (processesRunning) are this test's alone when
// tests run in parallel.
func binaries(t *testing.T) string {
	t.Helper()
	testvm.Slow(t, "builds binaries")
	built.once.Do(func() { built.dir, built.err = buildBinaries() })
	require.NoError(t, built.err)
	dir := t.TempDir()
	for _, name := range []string{"qoslab", "qoslab-agent"} {
		copyFile(t, filepath.Join(built.dir, name), filepath.Join(dir, name))
	}
	return dir
}

// qoslab runs the qoslab built in dir with args, in a fresh working and
// config directory, and returns its output and exit status.
func qoslab(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return qoslabEnv(t, dir, nil, args...)
}

// qoslabEnv is qoslab with env added to (and overriding) the environment.
func qoslabEnv(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "qoslab"), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir()), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return o.String(), e.String(), code
}

// processesRunning lists live processes whose executable is under dir.
func processesRunning(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, dir) {
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if !strings.Contains(string(stat), ") Z ") {
				out = append(out, e.Name()+" "+exe)
			}
		}
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	dir := binaries(t)

	t.Run("bench csv", func(t *testing.T) {
		out, stderr, code := qoslab(t, dir, "bench", "--workload", "fp,int", "--qos", "background,33", "--threads", "1-2", "--loops", "2e6", "--repeat", "2", "--format", "csv")
		require.Equal(t, 0, code, stderr)
		samples, err := results.ReadCSV(strings.NewReader(out))
		require.NoError(t, err)
		// 2 workloads x 2 classes x (1+2 threads) x 2 repeats
		assert.Len(t, samples, 2*2*3*2)
		for _, s := range samples {
			assert.Equal(t, "host", s.Target)
			assert.Equal(t, 2e6, s.Work)
			assert.Positive(t, s.Rate)
			if s.QoS == 9 {
				assert.Equal(t, 9, s.QoSApplied, "background reads back as SCHED_IDLE: %s", s.QoSDetail)
				assert.Contains(t, s.QoSDetail, "SCHED_IDLE")
			}
		}
		assert.Contains(t, stderr, "host: ")
		assert.Empty(t, processesRunning(t, dir), "no agent left behind")
	})

	t.Run("bench --save is a results directory like run's", func(t *testing.T) {
		results := t.TempDir()
		for range 2 {
			_, stderr, code := qoslab(t, dir, "bench", "--workload", "fp", "--qos", "9,33", "--threads", "1", "--loops", "2e6", "--repeat", "3",
				"--save", "--results", results, "--format", "csv")
			require.Equal(t, 0, code, stderr)
			time.Sleep(1100 * time.Millisecond) // results directories are named by the second
		}
		out, stderr, code := qoslab(t, dir, "results", "show", "latest", "--results", results)
		require.Equal(t, 0, code, stderr)
		assert.Regexp(t, `:\s+bench, started`, out, "the line naming the run, wrapped after its path")
		assert.Regexp(t, `\nhost +9 background +1 +3 `, out, "the terminal's table")
		dirs, err := filepath.Glob(filepath.Join(results, "bench-*"))
		require.NoError(t, err)
		require.Len(t, dirs, 2)
		out, stderr, code = qoslab(t, dir, "compare", dirs[0], dirs[1])
		require.Equal(t, 0, code, stderr)
		assert.Regexp(t, `host\s+9 background\s+1\s+\S+ (±\d+%|\[\S+\])\s+\S+ (±\d+%|\[\S+\])\s+(~|[+-][\d.]+%|[\d.]+x) \(p`, out, "one column per run, the second against the first")
		_, stderr, code = qoslab(t, dir, "plot", dirs[1], "--only", "throughput")
		assert.Equal(t, 0, code, stderr)
	})

	t.Run("agent info", func(t *testing.T) {
		out, stderr, code := qoslab(t, dir, "agent", "info")
		require.Equal(t, 0, code, stderr)
		for _, k := range []string{"agent:", "cpu:", "logical cpus:", "virtualized:", "qos:", "codecs:"} {
			assert.Contains(t, out, k)
		}
	})

	t.Run("usage error is exit 2", func(t *testing.T) {
		_, stderr, code := qoslab(t, dir, "bench", "--threads", "4-1")
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, `threads "4-1": range "4-1" runs backwards`)
	})

	t.Run("missing agent is exit 1 and says what to do", func(t *testing.T) {
		_, stderr, code := qoslab(t, dir, "bench", "--agent", filepath.Join(dir, "nope"))
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "nope")
		assert.Contains(t, stderr, "--agent")
	})

	t.Run("interrupt stops the agent and the spinners", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(dir, "qoslab"), "bench", "--loops", "1e12", "--repeat", "1", "--qos", "default", "--contention", "1", "--format", "json")
		cmd.Dir = t.TempDir()
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { return len(processesRunning(t, dir)) >= 3 }, 20*time.Second, 50*time.Millisecond,
			"qoslab, its agent and its spinner process start")
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		err := cmd.Wait()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, e.String())
		assert.Equal(t, 130, exit.ExitCode(), e.String())
		assert.Contains(t, e.String(), "interrupted")
		assert.Contains(t, o.String(), `"error"`, "the JSON written says the run is incomplete")
		assert.Eventually(t, func() bool { return len(processesRunning(t, dir)) == 0 }, 5*time.Second, 50*time.Millisecond,
			"left behind: %v", processesRunning(t, dir))
	})
}
