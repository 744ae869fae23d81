package experiment

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// fakeVM is a target the host sees as a machine: this test's process, its
// first threads standing for vCPU threads.
type fakeVM struct {
	fakeTarget
	mi hv.MachineInfo
}

func (f *fakeVM) Machine() hv.MachineInfo { return f.mi }

// A VM cell run's host view has its vCPU threads, in vCPU order, and the
// hypervisor's process, which is the run's own.
func TestRunnerRecordsAVMsVCPUs(t *testing.T) {
	ents, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil && len(tids) < 2 {
			tids = append(tids, tid)
		}
	}
	vm := &fakeVM{mi: hv.MachineInfo{PID: os.Getpid(), VCPUThreads: tids}}
	path := filepath.Join(t.TempDir(), results.SamplesFile)
	cells := []PlannedRun{{Target: spec.TargetVM, Workload: "fp", QoS: qos.Background, Threads: 2, Repeat: 1, Params: catalog.Params{Loops: 10}}}
	r := &runner{Cells: cells, Targets: map[string]Target{spec.TargetVM: vm}, Log: openLog(t, path), HostView: hostview.NewReader()}
	_, err = r.Run(context.Background())
	require.NoError(t, err)
	recs, _, err := results.ReadSamples(path)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	u := recs[0].HostView
	require.NotNil(t, u)
	require.Len(t, u.VCPUs, len(tids), "notes: %v", u.Notes)
	for i, v := range u.VCPUs {
		assert.Equal(t, hostview.VCPU{Index: i, TID: tids[i], RunNs: v.RunNs, WaitNs: v.WaitNs}, v)
	}
	require.NotNil(t, u.VM)
	assert.Equal(t, os.Getpid(), u.VM.PID)
	assert.Positive(t, u.Processes)
	for _, o := range u.Others {
		assert.NotEqual(t, os.Getpid(), o.PID, "the hypervisor is the run's own, never another's")
	}
}
