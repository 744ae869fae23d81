package cli

import (
	"fmt"
	"strings"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
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
