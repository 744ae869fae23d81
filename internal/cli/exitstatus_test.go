package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/results"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// results show --exit-status and run --exit-status exit 0 when every
// verdict is yes, 3 when one is no, 4 when one is inconclusive and none is
// no; without the flag both exit 0.
func TestExitStatusFollowsTheVerdicts(t *testing.T) {
	parent := t.TempDir()
	cases := []struct {
		name    string
		repeats int
		vmRatio float64
		code    int
		reason  string
	}{
		{"subsumed", 6, 1, 0, ""},
		{"kept", 6, 100, exitNo, "exit status 3: QoS is not subsumed for fp (fp no)"},
		{"too few repeats", 2, 1, exitInconclusive, "exit status 4: inconclusive for fp (fp inconclusive)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := verdictRun(t, parent, strings.ReplaceAll(c.name, " ", "-"), c.repeats, c.vmRatio)
			for _, args := range [][]string{
				{"results", "show", "--exit-status", dir},
				{"run", "--resume", dir, "--exit-status"},
			} {
				out, stderr, code := runRoot(t, nil, args...)
				assert.Equal(t, c.code, code, "%q: %s", args, stderr)
				assert.Contains(t, out, "QoS subsumed in VM: ", "%q: the verdict is printed before the status", args)
				if c.reason != "" {
					assert.Contains(t, stderr, c.reason, "%q", args)
				}
				if args[0] == "run" {
					_, stderr, code = runRoot(t, nil, "run", "--resume", dir)
				} else {
					_, stderr, code = runRoot(t, nil, "results", "show", dir)
				}
				assert.Equal(t, 0, code, "%q without --exit-status: %s", args, stderr)
			}
		})
	}
}

// A run with no verdict (one class, or one target) gives nothing to gate
// on: 4, not a silent 0.
func TestExitStatusWithoutAVerdict(t *testing.T) {
	dir := fakeRun(t, t.TempDir(), "hostonly", "fp", []float64{1, 2, 3, 4, 5, 6})
	_, stderr, code := runRoot(t, nil, "results", "show", "--exit-status", dir)
	assert.Equal(t, exitInconclusive, code)
	assert.Contains(t, stderr, "the run has no verdict")
}

// compare --fail-on exits 3 on a significant change beyond the limit,
// either way, a decrease counted by its ratio form.
func TestCompareFailOn(t *testing.T) {
	parent := t.TempDir()
	slow := fakeRun(t, parent, "slow", "fp", []float64{100, 101, 99, 98, 102})
	fast := fakeRun(t, parent, "fast", "fp", []float64{200, 199, 201, 202, 203})
	same := fakeRun(t, parent, "same", "fp", []float64{101, 100.5, 102.5, 99.5, 97})
	cases := []struct {
		dirs   []string
		failOn string
		code   int
	}{
		{[]string{slow, fast}, "10", exitNo},
		{[]string{slow, fast}, "10%", exitNo},
		{[]string{slow, fast}, "150", 0},
		{[]string{slow, fast}, "2x", exitNo},
		{[]string{slow, fast}, "3x", 0},
		{[]string{fast, slow}, "100", exitNo},
		{[]string{fast, slow}, "150", 0},
		{[]string{slow, same}, "0", 0},
	}
	for _, c := range cases {
		args := append([]string{"compare", "--fail-on", c.failOn}, c.dirs...)
		out, stderr, code := runRoot(t, nil, args...)
		assert.Equal(t, c.code, code, "%q: %s", args, stderr)
		assert.Contains(t, out, "vs base", "%q: the table is printed first", args)
		if c.code == exitNo {
			assert.Contains(t, stderr, "beyond --fail-on "+strings.TrimSuffix(c.failOn, "%"), "%q", args)
			assert.Contains(t, stderr, "host fp qos=background threads=1", "%q: names the cell", args)
		}
	}
	for _, bad := range []string{"ten", "-5", "1x", "0.5x"} {
		_, stderr, code := runRoot(t, nil, "compare", "--fail-on", bad, slow, fast)
		assert.Equal(t, 2, code, bad)
		assert.Contains(t, stderr, `--fail-on "`+bad+`": want a percentage`, bad)
	}
}

func TestParseFailOn(t *testing.T) {
	f, err := parseFailOn("--fail-on", "10")
	require.NoError(t, err)
	assert.InDelta(t, 1.1, f.Bound, 1e-12)
	assert.True(t, f.exceeds(1.11))
	assert.False(t, f.exceeds(1.09))
	assert.True(t, f.exceeds(0.9), "-10% is 1.11x")
	assert.False(t, f.exceeds(0.95))
	f, err = parseFailOn("--fail-on", "2x")
	require.NoError(t, err)
	assert.True(t, f.exceeds(0.005), "-99.5% is 200x")
	assert.False(t, f.exceeds(1.9))
}

// interferedRun writes a VM-only run of fp at QoS 9 and 33, 2 threads, 6
// repeats each, whose records carry the host's view: QoS 9's repeats run
// at rates9 (total loops/s), QoS 33's at 37M; the repeats of QoS 9 in hit
// got 1.1 host CPUs while python3 took half a CPU, every other one 1.9
// beside 0.02 CPU of other work.
func interferedRun(t *testing.T, parent, name string, rates9 []float64, hit ...int) string {
	t.Helper()
	d, err := results.Create(parent, name, time.Now())
	require.NoError(t, err)
	log, _, err := d.OpenSamples()
	require.NoError(t, err)
	defer log.Close()
	for _, q := range []int{9, 33} {
		for rep := 1; rep <= 6; rep++ {
			rate, share, other := 37e6*(1+0.001*float64(rep)), 1.9, 0.02
			if q == 9 {
				rate = rates9[rep-1]
				if slices.Contains(hit, rep) {
					share, other = 1.1, 0.5
				}
			}
			u := &hostview.Use{WallNs: 1e9, HostCPUs: 2, VCPUs: []hostview.VCPU{{Index: 0, TID: 11, RunNs: int64(share / 2 * 1e9)}, {Index: 1, TID: 12, RunNs: int64(share / 2 * 1e9)}},
				OtherCPUNs: int64(other * 1e9), Processes: 80, Others: []hostview.Process{{PID: 30353, Name: "python3", CPUNs: int64(other * 1e9)}}}
			var recs []results.Record
			for i := range 2 {
				s := results.Sample{Target: "vm", Workload: "fp", QoS: q, Threads: 2, Repeat: rep, Index: i, StartNs: 0, EndNs: 1e9, Work: rate / 2, Unit: "loops", Rate: rate / 2,
					QoSApplied: q, QoSFull: true, DurationNs: 1e9, CPUNs: 9.9e8}
				recs = append(recs, results.Record{Cell: fmt.Sprintf("vm fp qos=%d threads=2", q), Sample: s, HostView: u, RecordedAt: time.Now()})
			}
			require.NoError(t, log.Append(recs...))
		}
	}
	require.NoError(t, d.Finish(time.Now(), nil))
	return d.Path
}

// compare --fail-on counts a change behind which stand cell runs that
// other work took CPU from only when it still stands without them, and
// says so beside the change either way.
func TestCompareFailOnLeavesInterferedRunsOut(t *testing.T) {
	parent := t.TempDir()
	around := func(x float64) []float64 {
		out := make([]float64, 6)
		for i := range out {
			out[i] = x * (1 + 0.001*float64(i))
		}
		return out
	}
	base := interferedRun(t, parent, "base", around(37e6))
	// 3 of 6 repeats at 22M where python3 took half a CPU, the others 2.7%
	// slower than the baseline's: -21% with them, -2.7% without.
	explained := interferedRun(t, parent, "explained", []float64{22e6, 36e6, 22.1e6, 36.1e6, 22.2e6, 36.2e6}, 1, 3, 5)
	// The same, but the quiet repeats 19% slower: the change stands
	// without the interfered ones.
	stands := interferedRun(t, parent, "stands", []float64{18e6, 30e6, 18.1e6, 30.1e6, 18.2e6, 30.2e6}, 1, 3, 5)

	// Labels given: a run's own label depends on whether the runs started
	// in the same second.
	label := map[string]string{base: "base", explained: "explained", stands: "stands"}
	compare := func(failOn string, dirs ...string) (string, string, int) {
		args := []string{"compare", "--fail-on", failOn}
		for _, d := range dirs {
			args = append(args, "--label", label[d]+"="+d)
		}
		return runRoot(t, nil, append(args, dirs...)...)
	}
	out, stderr, code := compare("10", base, explained)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "-21.5% (p=0.0022) †", "the change is shown as measured, marked")
	assert.Regexp(t, `† vm fp qos=9 threads=2 in explained: other work on the host took 0.5 CPU during 3 of 12 of its cell runs \(the baseline's and this run's\); `+
		`without them -2.7% \(p=0.024\): a change --fail-on counts when beyond its limit`, strings.Join(strings.Fields(out), " "), "the note, wrapped")

	out, stderr, code = compare("10", base, stands)
	assert.Equal(t, exitNo, code, stderr)
	assert.Contains(t, out, "without them -18.9% (p=0.024)")
	assert.Contains(t, stderr, "vm fp qos=background threads=2 in stands:")
	assert.Contains(t, stderr, "0.65x (p=0.0022), and -18.9% (p=0.024) without the 3 of 12 cell runs other work took CPU from")

	_, stderr, code = compare("1", base, explained)
	assert.Equal(t, exitNo, code, "-2.7%% without them is beyond 1%%: %s", stderr)
}
