package cli

import (
	"strings"
	"testing"

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
