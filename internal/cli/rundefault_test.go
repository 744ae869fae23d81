package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/spec"
)

// The default experiment follows the host's core kinds: subsumption where
// they differ (Apple silicon's P and E cores), contention where they are
// alike (one capacity on Linux, or none named, as on an Intel Mac).
func TestDefaultExperimentFollowsCoreKinds(t *testing.T) {
	for _, c := range []struct {
		name     string
		levels   []*agentpb.PerfLevel
		cpus     int
		want     string
		wantWhy  string
		notInWhy string
	}{
		{"apple silicon", []*agentpb.PerfLevel{{Name: "perflevel0 Performance", LogicalCpus: 8}, {Name: "perflevel1 Efficiency", LogicalCpus: 4}}, 12,
			"subsumption", "this host's 12 CPUs are of 2 kinds (8 x perflevel0 Performance, 4 x perflevel1 Efficiency), so QoS can send work to the slower ones; subsumption shows the effect; --default contention to run the other", ""},
		{"linux, one capacity", []*agentpb.PerfLevel{{Name: "capacity 1024", LogicalCpus: 2, Capacity: 1024}}, 2,
			"contention", "this host's 2 CPUs are alike, so QoS has no slower cores to send work to; contention shows the effect; --default subsumption to run the other", ""},
		{"intel mac, no levels", nil, 8, "contention", "this host's 8 CPUs are alike", "kinds"},
		{"linux hybrid", []*agentpb.PerfLevel{{Name: "performance (cpu_core)", LogicalCpus: 4}, {Name: "efficiency (cpu_atom)", LogicalCpus: 8}}, 12,
			"subsumption", "12 CPUs are of 2 kinds (4 x performance (cpu_core), 8 x efficiency (cpu_atom))", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			name, why := defaultExperiment(c.levels, c.cpus)
			assert.Equal(t, c.want, name)
			assert.Contains(t, why, c.wantWhy)
			if c.notInWhy != "" {
				assert.NotContains(t, why, c.notInWhy)
			}
		})
	}
}

// stubMachine makes run see a host with cpus CPUs of levels, and restores
// the probe when the test ends.
func stubMachine(t *testing.T, cpus uint32, levels ...*agentpb.PerfLevel) {
	t.Helper()
	old := thisMachine
	thisMachine = func() *agentpb.InfoReply { return &agentpb.InfoReply{LogicalCpus: cpus, PerfLevels: levels} }
	t.Cleanup(func() { thisMachine = old })
}

// run with no experiment chosen runs the one this machine's cores call
// for and says which and why in the plan; one chosen by --default or a
// setting is run as it is, with no such line, and a warning where it may
// show nothing here.
func TestRunDefaultFitsTheMachine(t *testing.T) {
	t.Chdir(t.TempDir())
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CACHE_HOME": filepath.Join(home, "cache"), "XDG_STATE_HOME": filepath.Join(home, "state")}

	stubMachine(t, 2, &agentpb.PerfLevel{Name: "capacity 1024", LogicalCpus: 2})
	out, stderr, code := runRoot(t, env, "run", "--dry-run", "--quick")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "dry run of contention (built in)")
	assert.Contains(t, out, "experiment: contention (chosen: this host's 2 CPUs are alike, so QoS has no slower cores to send\n"+
		"            work to; contention shows the effect; --default subsumption to run the other)\n")

	stubMachine(t, 12, &agentpb.PerfLevel{Name: "perflevel0 Performance", LogicalCpus: 8}, &agentpb.PerfLevel{Name: "perflevel1 Efficiency", LogicalCpus: 4})
	out, stderr, code = runRoot(t, env, "run", "--dry-run", "--quick")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "dry run of subsumption (built in)")
	assert.Contains(t, out, "experiment: subsumption (chosen: this host's 12 CPUs are of 2 kinds")

	// Chosen by the user: run as it is, with a warning where it may show
	// nothing on this machine's alike cores.
	stubMachine(t, 2)
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
		warn bool
	}{
		{[]string{"--default", "subsumption"}, nil, "dry run of subsumption (built in)", true},
		{[]string{"--default", "contention"}, nil, "dry run of contention (built in)", false},
		{nil, map[string]string{"QOSLAB_RUN_DEFAULT": "pi"}, "dry run of pi (built in)", false},
	} {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		for k, v := range c.env {
			e[k] = v
		}
		out, stderr, code := runRoot(t, e, append([]string{"run", "--dry-run", "--quick"}, c.args...)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out, c.want, c.args)
		assert.NotContains(t, out, "experiment:", c.args)
		if c.warn {
			assert.Contains(t, out, "warning:    this host's 2 CPUs are alike and subsumption runs no contention spinners, so its classes\n", c.args)
		} else {
			assert.NotContains(t, out, "warning:", c.args)
		}
	}
}

// A spec that compares classes on the host without contention is said to
// fit badly only where the host's cores are alike.
func TestUnfitWarning(t *testing.T) {
	sub, err := spec.DefaultSpec("subsumption")
	require.NoError(t, err)
	pi, err := spec.DefaultSpec("pi")
	require.NoError(t, err)
	alike := []*agentpb.PerfLevel{{Name: "capacity 1024", LogicalCpus: 2}}
	kinds := []*agentpb.PerfLevel{{Name: "perflevel0 Performance", LogicalCpus: 8}, {Name: "perflevel1 Efficiency", LogicalCpus: 4}}
	assert.Equal(t, "this host's 2 CPUs are alike and subsumption runs no contention spinners, so its classes may all run at one speed on the host, leaving nothing to subsume; --default contention shows the effect here",
		unfitWarning(sub, 0, alike, 2))
	assert.NotEmpty(t, unfitWarning(sub, 0, nil, 4), "no kinds named: alike")
	assert.Empty(t, unfitWarning(sub, 0, kinds, 12), "cores of kinds")
	assert.Empty(t, unfitWarning(sub, 2, alike, 2), "contention keeps the cores busy")
	assert.Empty(t, unfitWarning(pi, 0, alike, 2), "one class: nothing compared")
	vmOnly := sub
	vmOnly.Targets = []string{spec.TargetVM}
	assert.Empty(t, unfitWarning(vmOnly, 0, alike, 2), "no host cells")
}
