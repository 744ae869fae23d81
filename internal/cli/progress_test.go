package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// The watchdog's line stands on a line of its own: in a log as it is, on
// a terminal above the progress line, which is drawn again under it.
func TestProgressPrintsAStall(t *testing.T) {
	c := experiment.PlannedRun{Target: spec.TargetVM, Workload: "fp", QoS: qos.Background, Threads: 1, Repeat: 1, Params: catalog.Params{Duration: time.Second}}
	s := experiment.Stall{Cell: c, Elapsed: time.Minute, Expected: time.Second, Basis: "its duration"}

	streams, _, errOut := testIO()
	p := &progress{io: streams}
	p.stall(s)
	assert.Equal(t, "stall: vm: fp qos=background threads=1 repeat=1 has run 1m0s, 60x the 1s expected (its duration)\n", errOut.String())

	streams, _, errOut = testIO()
	streams.Progress = true
	p = &progress{io: streams, head: "[3/48] vm fp"}
	p.stall(s)
	assert.Equal(t, "\r\033[Kstall: vm: fp qos=background threads=1 repeat=1 has run 1m0s, 60x the 1s expected (its duration)\n[3/48] vm fp", errOut.String())
}

// A line about the looks stands on a line of its own too: on a terminal
// it replaces the finished cell's progress line.
func TestProgressPrintsALook(t *testing.T) {
	line := "look 2 of 3, 12 cell runs: 6 more repeats of vm fp at 2 threads, repeats 7-12"
	streams, _, errOut := testIO()
	(&progress{io: streams}).look(line)
	assert.Equal(t, line+"\n", errOut.String())

	streams, _, errOut = testIO()
	streams.Progress = true
	(&progress{io: streams, head: "[48/48] vm fp"}).look(line)
	assert.Equal(t, "\r\033[K"+line+"\n", errOut.String())
}
