package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/benchdoc"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

func testIO() (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, out, errOut
}

// testFactory is a factory over test streams whose environment is env
// (HOME a fresh directory unless env sets it).
func testFactory(t *testing.T, env map[string]string) *Factory {
	t.Helper()
	streams, _, _ := testIO()
	f := NewFactory(streams)
	home := t.TempDir()
	f.Env = func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "HOME" {
			return home
		}
		return ""
	}
	return f
}

// parseBench runs `bench args...` (the command alone, no root) with env and
// returns the options it would have run with.
func parseBench(t *testing.T, env map[string]string, args ...string) (*benchOptions, error) {
	t.Helper()
	var got *benchOptions
	cmd := newCmdBench(testFactory(t, env), func(_ context.Context, o *benchOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	return got, err
}

// parseBenchRoot runs `qoslab bench args...` through the root command, which
// owns --config and the check for unknown config keys.
func parseBenchRoot(t *testing.T, env map[string]string, args ...string) (*benchOptions, error) {
	t.Helper()
	f := testFactory(t, env)
	var got *benchOptions
	root := NewCmdRoot(f)
	for _, c := range root.Commands() {
		if c.Name() == "bench" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newCmdBench(f, func(_ context.Context, o *benchOptions) error { got = o; return nil }))
	root.SetArgs(append([]string{"bench"}, args...))
	err := root.Execute()
	return got, err
}

// plan is the plan of the experiment bench's flags describe.
func (o *benchOptions) plan() []experiment.PlannedRun {
	cells, _ := experiment.Plan(o.spec())
	return cells
}

func TestBenchFlags(t *testing.T) {
	t.Chdir(t.TempDir())
	o, err := parseBench(t, nil, "--workload", "fp", "--qos", "9,user-interactive", "--threads", "1-4", "--loops", "2e8", "--repeat", "3", "--contention", "2", "--format", "csv")
	require.NoError(t, err)
	assert.Equal(t, []string{"fp"}, o.Workloads)
	assert.Equal(t, []qos.Class{qos.Background, qos.UserInteractive}, o.QoS)
	assert.Equal(t, []int{1, 2, 3, 4}, o.Threads)
	assert.Equal(t, uint64(2e8), o.Loops)
	assert.Equal(t, 3, o.Repeat)
	assert.Equal(t, contention.SpinnerCount(2), o.Contention)
	assert.Equal(t, "csv", o.Format)
	assert.Len(t, o.plan(), 2*4*3)
	assert.Equal(t, 1, o.plan()[0].Repeat, "repeats are outermost")
	assert.Equal(t, 1, o.plan()[2*4-1].Repeat)
	assert.Equal(t, 2, o.plan()[2*4].Repeat)
}

// Without --repeat bench runs 6 repeats of every cell: 3 against 3 could
// never show a significant difference.
func TestBenchRepeatsSixByDefault(t *testing.T) {
	t.Chdir(t.TempDir())
	o, err := parseBench(t, nil, "--workload", "fp", "--qos", "9,33")
	require.NoError(t, err)
	assert.Equal(t, 6, o.Repeat)
	assert.Len(t, o.plan(), 2*6)
}

// --duration replaces loops in every cell's request; --warmup adds untimed
// runs before each cell's first timed one.
func TestBenchDurationAndWarmup(t *testing.T) {
	t.Chdir(t.TempDir())
	o, err := parseBench(t, nil, "--workload", "fp,int", "--duration", "1500ms", "--warmup", "2", "--repeat", "2")
	require.NoError(t, err)
	s := o.spec()
	require.Len(t, s.Matrix, 2)
	for _, e := range s.Matrix {
		assert.Equal(t, 1500*time.Millisecond, e.Duration, e.Workload)
		assert.Zero(t, e.Loops, e.Workload)
	}
	assert.Equal(t, 2, s.Warmup)
	require.NoError(t, s.Validate())
	cells := o.plan()
	warm := 0
	for _, c := range cells {
		if !c.Timed() {
			warm++
		}
		assert.Equal(t, int64(1500*time.Millisecond), c.Request().GetDurationNs())
	}
	assert.Equal(t, 2*2*2, warm, "2 warm-ups of each of 2 workloads x 2 classes")
}

func TestBenchBadFlagsAreUsageErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"--workload", "fft"}, `unknown workload "fft": allowed compress, decompress, fp`},
		{[]string{"--qos", "urgent"}, `unknown QoS class "urgent": allowed background|9`},
		{[]string{"--qos", "10"}, `unknown QoS class "10"`},
		{[]string{"--threads", "4-1"}, "runs backwards"},
		{[]string{"--threads", "0"}, "outside 1..1024"},
		{[]string{"--threads", "-2"}, "not a whole number"},
		{[]string{"--loops", "1e30"}, "allowed 1.."},
		{[]string{"--loops", "99999999999999999999999"}, "overflows"},
		{[]string{"--repeat", "0"}, "--repeat 0: allowed 1..1000"},
		{[]string{"--format", "xml"}, `--format "xml": allowed text, md, json, csv`},
		{[]string{"--sink", "tape"}, `--sink "tape": allowed file, block, null`},
		{[]string{"--sink", "block"}, "needs --sink-path DEVICE"},
		{[]string{"--contention", "-1"}, `--contention "-1": allowed 0..256 spinner threads or all (one per CPU)`},
		{[]string{"--contention", "every"}, `--contention "every": allowed 0..256 spinner threads or all`},
		{[]string{"--size", "lots"}, "not a size"},
		{[]string{"--duration", "1s", "--loops", "1e6"}, "--loops 1e6 and --duration 1s: give one, not both"},
		{[]string{"--duration", "1ms"}, "--duration: duration 1ms: allowed 10ms..1h0m0s"},
		{[]string{"--duration", "1s", "--workload", "fp,pi"}, "--duration: pi does not take a duration: allowed for fp, int, mmul"},
		{[]string{"--duration", "soon"}, "invalid argument"},
		{[]string{"--warmup", "-1"}, "--warmup -1: allowed 0..100"},
		{[]string{"--repeat", "three"}, "invalid argument"},
		{[]string{"--vm-model", "vmware"}, `--vm-model "vmware": allowed default, vz`},
		{[]string{"--vm-model", "vz", "--vm-backend", "vz"}, "--vm-model vz: the vz model is the qemu backend's emulation of Virtualization.framework's devices; with --vm-backend vz leave it out"},
		{[]string{"extra"}, "takes no arguments"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, err := parseBench(t, nil, c.args...)
			require.Error(t, err)
			assert.ErrorContains(t, err, c.msg)
			assert.True(t, isUsageError(err), "exit status 2: %v", err)
		})
	}
}

// --vm-model vz asks the qemu backend for Virtualization.framework's
// device model, with the arm64 image unless another is named.
func TestBenchVMModel(t *testing.T) {
	t.Chdir(t.TempDir())
	o, err := parseBench(t, nil, "--target", "vm", "--vm-model", "vz", "--vm-backend", "qemu")
	require.NoError(t, err)
	assert.Equal(t, "vz", o.VM.Model)
	assert.Equal(t, "linux-arm64", o.VM.Image)

	o, err = parseBench(t, nil, "--target", "vm", "--vm-model", "vz", "--image", "mine")
	require.NoError(t, err)
	assert.Equal(t, "mine", o.VM.Image)

	o, err = parseBench(t, nil, "--target", "vm", "--vm-model", "default")
	require.NoError(t, err)
	assert.Empty(t, o.VM.Model, "the backend's own model is the default")

	o, err = parseBench(t, map[string]string{"QOSLAB_BENCH_VM_MODEL": "vz"}, "--target", "vm", "--vm-backend", "qemu")
	require.NoError(t, err)
	assert.Equal(t, "vz", o.VM.Model, "a setting like any other flag")
}

func TestBenchConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("qoslab.yaml", []byte("agent: /from/config\nbench:\n  loops: 5\n  repeat: 7\n  threads: 1-3\n  qos: utility\n"), 0o644))

	t.Run("config file", func(t *testing.T) {
		o, err := parseBench(t, nil)
		require.NoError(t, err)
		assert.Equal(t, uint64(5), o.Loops, "./qoslab.yaml is read")
		assert.Equal(t, 7, o.Repeat)
		assert.Equal(t, []int{1, 2, 3}, o.Threads)
		assert.Equal(t, []qos.Class{qos.Utility}, o.QoS)
		assert.Equal(t, "/from/config", o.AgentPath)
	})
	t.Run("environment", func(t *testing.T) {
		o, err := parseBench(t, map[string]string{"QOSLAB_BENCH_LOOPS": "6", "QOSLAB_AGENT": "/from/env"})
		require.NoError(t, err)
		assert.Equal(t, uint64(6), o.Loops, "environment beats the config file")
		assert.Equal(t, "/from/env", o.AgentPath)
		assert.Equal(t, 7, o.Repeat, "config still fills what the environment leaves")
	})
	t.Run("flags", func(t *testing.T) {
		o, err := parseBench(t, map[string]string{"QOSLAB_BENCH_LOOPS": "6"}, "--loops", "8", "--agent", "/from/flag")
		require.NoError(t, err)
		assert.Equal(t, uint64(8), o.Loops, "flags win")
		assert.Equal(t, "/from/flag", o.AgentPath)
	})
	t.Run("--config", func(t *testing.T) {
		other := filepath.Join(dir, "other.yaml")
		require.NoError(t, os.WriteFile(other, []byte("bench:\n  repeat: 9\n"), 0o644))
		o, err := parseBenchRoot(t, nil, "--config", other)
		require.NoError(t, err)
		assert.Equal(t, 9, o.Repeat, "--config replaces ./qoslab.yaml")
		assert.Equal(t, uint64(0), o.Loops)
	})
}

func TestConfigXDGAndUnknownKeys(t *testing.T) {
	t.Chdir(t.TempDir())
	xdg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "qoslab"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "qoslab", "config.yaml"), []byte("bench:\n  repeat: 4\n"), 0o644))
	o, err := parseBench(t, map[string]string{"XDG_CONFIG_HOME": xdg})
	require.NoError(t, err)
	assert.Equal(t, 4, o.Repeat)

	require.NoError(t, os.WriteFile(filepath.Join(xdg, "qoslab", "config.yaml"), []byte("bench:\n  repaet: 4\nagnet: x\n"), 0o644))
	_, err = parseBenchRoot(t, map[string]string{"XDG_CONFIG_HOME": xdg})
	require.Error(t, err)
	assert.ErrorContains(t, err, "unknown keys agnet, bench.repaet")
	assert.True(t, isUsageError(err))

	_, err = parseBenchRoot(t, nil, "--config", "/no/such/qoslab.yaml")
	assert.ErrorContains(t, err, "/no/such/qoslab.yaml")
}

// fakeAgent answers like an agent: each thread does work loops in 1 s.
type fakeAgent struct {
	speed   float64 // fraction of the work done per second; 0 means 1
	onRun   func()
	info    *agentpb.InfoReply
	failAt  int // 1-based Run call that fails; 0 never
	calls   int
	reqs    []*agentpb.RunRequest
	closed  bool
	applied int32 // class the threads read back as; 0: as asked
	hangAt  int   // 1-based Run call that never finishes on its own; 0 never
}

// fakeContention stands in for the spinner process.
func fakeContention(_ context.Context, n int) (*contention.Contention, error) {
	return &contention.Contention{Threads: n}, nil
}

func (a *fakeAgent) Info(context.Context) (*agentpb.InfoReply, error) { return a.info, nil }
func (a *fakeAgent) Close() error                                     { a.closed = true; return nil }
func (a *fakeAgent) Run(ctx context.Context, req *agentpb.RunRequest, _ func(*agentpb.Progress)) (*agentpb.Result, error) {
	a.calls++
	a.reqs = append(a.reqs, req)
	if a.calls == a.hangAt {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if a.onRun != nil {
		a.onRun()
	}
	speed := a.speed
	if speed == 0 {
		speed = 1
	}
	res := &agentpb.Result{Unit: "loops"}
	for i := uint32(0); i < req.Threads; i++ {
		applied := req.Qos
		if a.applied != 0 {
			applied = a.applied
		}
		res.Records = append(res.Records, &agentpb.ThreadRecord{Index: i, StartNs: 0, EndNs: int64(1e9 / speed), Work: float64(req.Loops),
			Rate: float64(req.Loops) * speed, Qos: &agentpb.QoSApplied{Asked: req.Qos, Applied: applied, Full: true}})
	}
	if a.calls == a.failAt {
		return &agentpb.Result{Records: res.Records[:1]}, errors.New("agent channel closed")
	}
	return res, nil
}

func benchWithFake(t *testing.T, a *fakeAgent, args ...string) (*benchOptions, string, string, error) {
	t.Helper()
	t.Chdir(t.TempDir())
	o, err := parseBench(t, nil, args...)
	require.NoError(t, err)
	streams, out, errOut := testIO()
	o.IO = streams
	o.StartTarget = func(_ context.Context, target string, _ spec.Spec, _ io.Writer) (experiment.Target, []string, error) {
		if target != "host" {
			return nil, nil, fmt.Errorf("fake has no %s target", target)
		}
		return a, nil, nil
	}
	o.StartContention = fakeContention
	err = benchRun(context.Background(), o)
	return o, out.String(), errOut.String(), err
}

func newFake() *fakeAgent {
	return &fakeAgent{info: &agentpb.InfoReply{Os: "linux", Arch: "amd64", CpuModel: "Test CPU", LogicalCpus: 2, Codecs: []string{"zstd", "gzip", "lz4"}}}
}

func TestBenchTableAndCSV(t *testing.T) {
	a := newFake()
	_, out, _, err := benchWithFake(t, a, "--qos", "9,33", "--threads", "1-2", "--loops", "1000", "--repeat", "2")
	require.NoError(t, err)
	assert.True(t, a.closed, "the agent is stopped")
	assert.Equal(t, 8, a.calls)
	assert.Contains(t, out, "TOTAL RATE")
	assert.Contains(t, out, "9 background")
	assert.Contains(t, out, "33 user-interactive")
	// two threads at 1000 loops each in 1 s: total rate 2000 loops/s
	assert.Contains(t, out, "2k [2k..2k]")

	a = newFake()
	_, out, _, err = benchWithFake(t, a, "--qos", "9", "--threads", "2", "--loops", "1000", "--repeat", "1", "--format", "csv")
	require.NoError(t, err)
	samples, err := results.ReadCSV(strings.NewReader(out))
	require.NoError(t, err)
	require.Len(t, samples, 2)
	assert.Equal(t, "host", samples[0].Target)
	assert.Equal(t, 9, samples[1].QoS)
	assert.Equal(t, 1, samples[1].Index)
	assert.Equal(t, 1000.0, samples[1].Work)
}

func TestBenchMarksClassesNotApplied(t *testing.T) {
	a := newFake()
	a.applied = int32(qos.Default)
	_, out, _, err := benchWithFake(t, a, "--qos", "33", "--loops", "10", "--repeat", "1")
	require.NoError(t, err)
	assert.Contains(t, out, "default (other class)", "threads that read back as another class are said to")
	assert.Contains(t, strings.Join(strings.Fields(out), " "), summary.QoSNotesIntro, "the legend under the table, as written (wrapped)")
}

func TestBenchKeepsFinishedCellsOnFailure(t *testing.T) {
	a := newFake()
	_, out, _, err := benchWithFake(t, a, "--qos", "9,33", "--threads", "1", "--loops", "10", "--repeat", "2", "--format", "json")
	require.NoError(t, err)
	var full benchdoc.Bench
	require.NoError(t, json.Unmarshal([]byte(out), &full))
	assert.Len(t, full.Samples, 4)

	a = newFake()
	a.failAt = 3
	_, out, _, err = benchWithFake(t, a, "--qos", "9,33", "--threads", "1", "--loops", "10", "--repeat", "2", "--format", "json")
	require.Error(t, err)
	assert.ErrorContains(t, err, "cell 3/4 (host: fp qos=background threads=1 repeat=2)")
	assert.ErrorContains(t, err, "agent channel closed")
	assert.False(t, isUsageError(err), "a failure is exit status 1")
	var partial benchdoc.Bench
	require.NoError(t, json.Unmarshal([]byte(out), &partial), "the output is still complete JSON")
	assert.Len(t, partial.Samples, 2, "the two finished cells are written")
	assert.Contains(t, partial.Error, "agent channel closed")
	assert.True(t, a.closed)
}

func TestBenchOutFile(t *testing.T) {
	a := newFake()
	dir := t.TempDir()
	path := filepath.Join(dir, "fp.csv")
	_, out, errOut, err := benchWithFake(t, a, "--loops", "10", "--repeat", "1", "--format", "csv", "--out", path)
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	samples, err := results.ReadCSV(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Len(t, samples, 2)
	assert.Contains(t, out, "TOTAL RATE", "the table still goes to the terminal")
	assert.Contains(t, errOut, "wrote "+path)
	left, _ := filepath.Glob(filepath.Join(dir, ".fp.csv.*"))
	assert.Empty(t, left, "no temporary file left behind")

	_, err = parseBench(t, nil, "--out", "/no/such/dir/x.csv")
	require.NoError(t, err)
	a = newFake()
	_, _, _, err = benchWithFake(t, a, "--out", "/no/such/dir/x.csv")
	require.Error(t, err)
	assert.ErrorContains(t, err, "--out /no/such/dir/x.csv: cannot write there")
	assert.Zero(t, a.calls, "nothing is measured when the output cannot be written")
}

func TestBenchRefusesCodecTheAgentLacks(t *testing.T) {
	a := newFake()
	_, _, _, err := benchWithFake(t, a, "--workload", "compress", "--codec", "lzfse")
	require.Error(t, err)
	assert.ErrorContains(t, err, `--codec "lzfse" is not available on linux/amd64: allowed zstd, gzip, lz4`)
	assert.Zero(t, a.calls)
}

func TestBenchContentionRecorded(t *testing.T) {
	a := newFake()
	_, out, errOut, err := benchWithFake(t, a, "--loops", "10", "--repeat", "1", "--contention", "2", "--format", "csv")
	require.NoError(t, err)
	assert.Contains(t, errOut, "contention: 2 spinner threads")
	samples, err := results.ReadCSV(strings.NewReader(out))
	require.NoError(t, err)
	for _, s := range samples {
		assert.Equal(t, 2, s.Contention)
	}
}

// --contention all starts one spinner per CPU qoslab may use (Go's NumCPU
// counts the affinity mask it starts with) and every sample records it.
func TestBenchContentionAll(t *testing.T) {
	a := newFake()
	_, out, errOut, err := benchWithFake(t, a, "--loops", "10", "--repeat", "1", "--contention", "all", "--format", "csv")
	require.NoError(t, err)
	assert.Contains(t, errOut, fmt.Sprintf("contention: %s", units.Plural(runtime.NumCPU(), "spinner thread")))
	samples, err := results.ReadCSV(strings.NewReader(out))
	require.NoError(t, err)
	require.NotEmpty(t, samples)
	for _, s := range samples {
		assert.Equal(t, runtime.NumCPU(), s.Contention)
	}
}

func TestBenchTwoTargetsInterleavedSideBySide(t *testing.T) {
	t.Chdir(t.TempDir())
	o, err := parseBench(t, nil, "--target", "host,vm", "--qos", "9", "--threads", "1", "--loops", "1000", "--repeat", "2")
	require.NoError(t, err)
	assert.Equal(t, []string{"host", "vm"}, o.Targets)
	host, vm := newFake(), newFake()
	vm.speed = 0.5 // the guest does half the work per second
	var order []string
	streams, out, _ := testIO()
	o.IO = streams
	o.StartTarget = func(_ context.Context, target string, _ spec.Spec, _ io.Writer) (experiment.Target, []string, error) {
		a := map[string]*fakeAgent{"host": host, "vm": vm}[target]
		a.onRun = func() { order = append(order, target) }
		return a, nil, nil
	}
	require.NoError(t, benchRun(context.Background(), o))
	assert.Equal(t, []string{"host", "vm", "host", "vm"}, order, "targets alternate within each repeat")
	assert.True(t, host.closed)
	assert.True(t, vm.closed)
	assert.Contains(t, out.String(), "HOST TOTAL RATE")
	assert.Contains(t, out.String(), "VM TOTAL RATE")
	assert.Contains(t, out.String(), "0.500x", "the vm/host ratio of median total rates")

	o.Format = "csv"
	out.Reset()
	require.NoError(t, benchRun(context.Background(), o))
	samples, err := results.ReadCSV(strings.NewReader(out.String()))
	require.NoError(t, err)
	targets := map[string]int{}
	for _, s := range samples {
		targets[s.Target]++
	}
	assert.Equal(t, map[string]int{"host": 2, "vm": 2}, targets)
}

func TestBenchTargetFlag(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := parseBench(t, nil, "--target", "cloud")
	assert.ErrorContains(t, err, `--target "cloud": allowed host, vm`)
	_, err = parseBench(t, nil, "--target", "vm", "--cpus", "0")
	assert.ErrorContains(t, err, "--cpus 0: allowed 1..256")
	_, err = parseBench(t, nil, "--target", "vm", "--memory", "64MiB")
	assert.ErrorContains(t, err, "allowed 128MiB and more")
	_, err = parseBench(t, nil, "--target", "vm", "--accel", "xen")
	assert.ErrorContains(t, err, `--accel "xen": allowed kvm, tcg, hvf`)
}

func TestVMNeedsFollowCompressionSize(t *testing.T) {
	t.Chdir(t.TempDir())
	o, err := parseBench(t, nil, "--target", "vm", "--workload", "fp")
	require.NoError(t, err)
	mem, _ := spec.VMSize(o.spec())
	assert.Equal(t, 1024, mem)
	o, err = parseBench(t, nil, "--target", "vm", "--workload", "compress", "--size", "1GiB", "--threads", "1-4")
	require.NoError(t, err)
	mem, disk := spec.VMSize(o.spec())
	assert.GreaterOrEqual(t, mem, 2048+512, "the agent allows a size of at most half the guest's memory")
	assert.Greater(t, disk, int64(1<<30), "the scratch disk takes the output of every thread")
	o, err = parseBench(t, nil, "--target", "vm", "--workload", "compress", "--memory", "4GiB")
	require.NoError(t, err)
	mem, _ = spec.VMSize(o.spec())
	assert.Equal(t, 4096, mem, "--memory wins over the sizing rule")
}

// A host cell whose measured interval is under 250 ms is named, with what
// to do, under the table where the numbers are read; a long one is not.
func TestBenchWarnsOfCellsTooShort(t *testing.T) {
	a := newFake()
	a.speed = 100 // 10 ms cells
	_, out, errOut, err := benchWithFake(t, a, "--loops", "10", "--repeat", "1", "--qos", "9")
	require.NoError(t, err)
	assert.Contains(t, strings.Join(strings.Fields(out), " "), "- warning: host fp qos=background threads=1 ran 10ms (< 250ms): scheduler placement can decide a cell this short; use duration: 1s (bench: --duration 1s) or more loops",
		"said under the table (wrapped to fit)")
	assert.NotContains(t, errOut, "(< 250ms)", "said once, under the table, not as the run goes (its kind, not its words, says so)")
	// Without a table to say it under, the run says it as it goes.
	_, out, errOut, err = benchWithFake(t, newFakeAt(100), "--loops", "10", "--repeat", "1", "--qos", "9", "--format", "json")
	require.NoError(t, err)
	assert.Contains(t, errOut, "warning: host fp qos=background threads=1 ran 10ms (< 250ms)")
	assert.Contains(t, out, `"warning: host fp qos=background threads=1 ran 10ms (\u003c 250ms)`, "and the JSON's notes keep it")

	slow := newFake() // 1 s cells
	_, out, _, err = benchWithFake(t, slow, "--loops", "10", "--repeat", "1", "--qos", "9")
	require.NoError(t, err)
	// (Only this warning: run under nice, qoslab also warns of that.)
	assert.NotContains(t, out, "(< 250ms)")
}

// newFakeAt is a fake agent at speed (100: 10 ms cells of 10 loops).
func newFakeAt(speed float64) *fakeAgent {
	a := newFake()
	a.speed = speed
	return a
}

// A cell that never finishes is ended by --cell-timeout with an error that
// says so, and a saved run keeps what finished, to resume.
func TestBenchCellTimeout(t *testing.T) {
	a := newFake()
	a.hangAt = 3
	_, _, errOut, err := benchWithFake(t, a, "--qos", "9,33", "--threads", "1", "--loops", "10", "--repeat", "2", "--save", "--cell-timeout", "1s")
	require.Error(t, err)
	assert.False(t, isUsageError(err), "a failure is exit status 1")
	assert.ErrorContains(t, err, "cell 3/4 (host: fp qos=background threads=1 repeat=2) ran past the cell timeout of 1s (--cell-timeout, or the spec's cell_timeout) and was ended")
	assert.ErrorContains(t, err, "finish the run with: qoslab run --resume ")
	assert.Contains(t, errOut, "cell timeout: 1s")
	assert.True(t, a.closed, "the agent is stopped")
	dirs, err := filepath.Glob(filepath.Join("qoslab-results", "bench-*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	d, s, err := experiment.ResumeRun(dirs[0], time.Now())
	require.NoError(t, err, "the directory can be resumed")
	defer d.Unlock()
	assert.Equal(t, time.Second, s.CellTimeout, "the timeout is recorded with the spec")
	recs, _, err := d.ReadSamples()
	require.NoError(t, err)
	assert.Len(t, results.FinishedRepeats(recs), 2, "the two cells that finished are kept")
}

// Every cell parameter has its flag, and what it is given reaches the
// matrix entry of each workload that takes it and bench's request.
func TestBenchHasAFlagForEveryParameter(t *testing.T) {
	t.Chdir(t.TempDir())
	values := map[string]string{"loops": "7", "duration": "2s", "size": "2MiB", "ratio": "2.5", "codec": "gzip", "level": "3", "sink": "null", "sink-path": "/a b"}
	for _, k := range catalog.ParamKeys() {
		t.Run(k.Flag, func(t *testing.T) {
			v, ok := values[k.Flag]
			if !ok {
				v = "3" // a parameter this test does not know: a number most take
			}
			w := catalog.FP
			if k.Compression {
				w = catalog.Compress
			}
			o, err := parseBench(t, nil, "--workload", w, "--"+k.Flag, v)
			require.NoError(t, err)
			var want catalog.Params
			require.NoError(t, k.ReadText(k.Flag, v, &want))
			s := o.spec()
			require.Len(t, s.Matrix, 1)
			assert.Equal(t, k.Text(want), k.Text(s.Matrix[0].Params), "the matrix entry's %s", k.Name)
			req := benchdoc.NewBench(s, "", "", "").Request
			if k.Name != "loops" { // the request holds loops per workload
				assert.Equal(t, k.Text(want), k.Text(req.Params), "the request's %s", k.Name)
			}
		})
	}
}
