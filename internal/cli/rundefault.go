package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
)

// The built-in experiments run picks between when none is chosen.
const (
	// experimentKinds shows QoS where cores are of kinds: a low class
	// is sent to the slower cores even on an idle machine.
	experimentKinds = "subsumption"
	// experimentAlike shows QoS where cores are alike: the class only
	// decides who runs when cores are scarce, so every CPU is kept busy.
	experimentAlike = "contention"
)

// thisMachine describes the machine run chooses its default experiment
// for; tests replace it.
var thisMachine = agent.ThisMachine

// defaultExperiment is the built-in spec run runs when neither --spec nor
// --default (on the command line, in the environment or the config file)
// chooses one, and why, for the plan: the experiment that shows the effect
// on a machine with these core kinds (an agent's perf levels; none or one
// when its cores are alike) and logical CPUs.
func defaultExperiment(levels []*agentpb.PerfLevel, cpus int) (name, why string) {
	if len(levels) > 1 {
		kinds := make([]string, len(levels))
		for i, l := range levels {
			kinds[i] = fmt.Sprintf("%d x %s", l.GetLogicalCpus(), l.GetName())
		}
		return experimentKinds, fmt.Sprintf("this host's %s are of %d kinds (%s), so QoS can send work to the slower ones; %s shows the effect; --default %s to run the other",
			units.Plural(cpus, "CPU"), len(levels), strings.Join(kinds, ", "), experimentKinds, experimentAlike)
	}
	return experimentAlike, fmt.Sprintf("this host's %s are alike, so QoS has no slower cores to send work to; %s shows the effect; --default %s to run the other",
		units.Plural(cpus, "CPU"), experimentAlike, experimentKinds)
}

// chooseDefault sets o.Default to the experiment that fits this machine
// when the user chose none: no --spec, --resume or --again, and no
// --default from the command line or the settings (fromSettings).
func (o *runOptions) chooseDefault(given, fromSettings bool) {
	if given || fromSettings || o.SpecFile != "" || o.Resume != "" || o.Again != "" {
		return
	}
	m := thisMachine()
	o.Default, o.defaultWhy = defaultExperiment(m.GetPerfLevels(), int(m.GetLogicalCpus()))
}

// unfitWarning says why s may show no QoS effect on a host with these
// core kinds and CPUs, running spinners contention spinners: it compares
// classes on the host, but the cores are alike and nothing keeps them
// busy, so no class has anything to lose (the verdict's "nothing to
// subsume"); "" when it may show one.
func unfitWarning(s spec.Spec, spinners int, levels []*agentpb.PerfLevel, cpus int) string {
	classes := false
	for _, e := range s.Matrix {
		classes = classes || len(e.QoS) > 1
	}
	if len(levels) > 1 || spinners > 0 || !classes || !slices.Contains(s.Targets, spec.TargetHost) {
		return ""
	}
	return fmt.Sprintf("this host's %s are alike and %s runs no contention spinners, so its classes may all run at one speed on the host, leaving nothing to subsume; --default %s shows the effect here",
		units.Plural(cpus, "CPU"), s.Name, experimentAlike)
}

// unfit is unfitWarning for s on this machine, "" when this machine chose
// it or a resume keeps it.
func (o *runOptions) unfit(s spec.Spec, spinners int) string {
	if o.defaultWhy != "" || o.Resume != "" {
		return ""
	}
	m := thisMachine()
	return unfitWarning(s, spinners, m.GetPerfLevels(), int(m.GetLogicalCpus()))
}
