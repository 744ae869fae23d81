package summary

import (
	"reflect"
	"strconv"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/shquote"
	"github.com/qoslab/qoslab/internal/spec"
)

// Again is a run as a command can start it again: the spec it recorded
// and its results directory. A verdict's next step is worded with it.
type Again struct {
	Spec spec.Spec
	Path string
}

// Command is the command that runs the spec again, with a new seed: the
// built-in spec's name when the run measured one as built in (--quick
// too), else the run's record (--again, which takes every setting it
// recorded).
func (g *Again) Command() string {
	s := g.Spec
	s.Seed = nil
	for _, name := range spec.DefaultSpecNames() {
		d, err := spec.DefaultSpec(name)
		if err != nil {
			continue
		}
		d.Seed = nil
		switch {
		case reflect.DeepEqual(s, d):
			return "qoslab run --default " + name
		case reflect.DeepEqual(s, spec.Shrink(d)):
			return "qoslab run --default " + name + " --quick"
		}
	}
	return "qoslab run --again " + shquote.Quote(g.Path)
}

// Next is the command that takes next step n: Command with the repeats or
// the cap n asks for (and a cap that --repeats would leave below them
// raised to match); empty without a step or a run.
func (g *Again) Next(n *analysis.NextStep) string {
	if g == nil || n == nil {
		return ""
	}
	cmd := g.Command()
	switch {
	case n.Repeats > 0:
		cmd += " --repeats " + strconv.Itoa(n.Repeats)
		if s := g.Spec.WithRepeats(n.Repeats); s.MaxRepeats != 0 && s.MaxRepeats < n.Repeats {
			cmd += " --max-repeats " + strconv.Itoa(n.Repeats)
		}
	case n.MaxRepeats > 0:
		cmd += " --max-repeats " + strconv.Itoa(n.MaxRepeats)
	default:
		return ""
	}
	return cmd
}

// NextLine is a verdict's next step as a line of its own: the command
// and what it asks; empty when there is none.
func (g *Again) NextLine(n *analysis.NextStep) string {
	cmd, rest := g.NextParts(n)
	if cmd == "" {
		return ""
	}
	return "`" + cmd + "`" + rest
}

// NextParts are NextLine's command and the words after it, for a format
// that sets the command apart its own way (HTML's code element); both
// empty when there is no next step.
func (g *Again) NextParts(n *analysis.NextStep) (cmd, rest string) {
	cmd = g.Next(n)
	if cmd == "" {
		return "", ""
	}
	if n.Repeats > 0 {
		return cmd, " measures each cell " + strconv.Itoa(n.Repeats) + " times, which would tell"
	}
	return cmd, " lets the run add repeats up to " + strconv.Itoa(n.MaxRepeats) + " per cell, which would tell"
}
