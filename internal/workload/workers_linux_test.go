package workload

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Telemetry follows the measured threads by their kernel ids and places its
// samples on the cell's clock: both come from Progress.
func TestProgressNamesWorkersAndCellStart(t *testing.T) {
	prog := &Progress{}
	_, ok := prog.CellStart()
	require.False(t, ok, "no cell start before the cell")
	before := MonoNow()
	res, err := Run(context.Background(), Params{Workload: catalog.FP, QoS: qos.Default, Threads: 2, Params: catalog.Params{Loops: 1 << 20}}, prog)
	require.NoError(t, err)
	require.Len(t, res.Records, 2)
	start, ok := prog.CellStart()
	require.True(t, ok)
	assert.Greater(t, start, before)
	assert.Less(t, start, MonoNow())

	ws := prog.Workers()
	require.Len(t, ws, 2)
	roles := map[string]bool{}
	for _, w := range ws {
		assert.Equal(t, os.Getpid(), w.PID)
		assert.NotZero(t, w.TID)
		roles[w.Role] = true
	}
	assert.NotEqual(t, ws[0].TID, ws[1].TID, "each worker runs on its own locked thread")
	assert.Equal(t, map[string]bool{"worker 0": true, "worker 1": true}, roles)
}

func TestProgressNamesProcsWorkers(t *testing.T) {
	prog := &Progress{}
	res, err := Run(context.Background(), Params{Workload: catalog.Procs, QoS: qos.Default, Threads: 2, Params: catalog.Params{Loops: 1 << 20}}, prog)
	require.NoError(t, err)
	ws := prog.Workers()
	require.Len(t, ws, 2)
	pids := map[int]bool{}
	for _, r := range res.Records {
		pids[r.PID] = true
	}
	for _, w := range ws {
		assert.Equal(t, w.PID, w.TID, "a worker process is followed by its main thread")
		assert.True(t, pids[w.PID], "worker %d is one of the cell's processes", w.PID)
	}
}

// Workers beyond GOMAXPROCS would be time-sliced by Go, not scheduled by the
// kernel at their class: the cell raises it for its duration.
func TestCellGivesEveryWorkerAP(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	var during atomic.Int64
	prog := &Progress{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := Run(context.Background(), Params{Workload: catalog.FP, QoS: qos.Default, Threads: 3, Params: catalog.Params{Loops: 1 << 26}}, prog)
		assert.NoError(t, err)
	}()
	for {
		if _, ok := prog.CellStart(); ok {
			during.Store(int64(runtime.GOMAXPROCS(0)))
			break
		}
		runtime.Gosched()
	}
	<-done
	assert.GreaterOrEqual(t, during.Load(), int64(4), "3 workers and one spare P while the cell runs")
	assert.Equal(t, 1, runtime.GOMAXPROCS(0), "restored after the cell")
}

// The collector is off while the workers are measured and back on after.
func TestCellQuietsTheCollector(t *testing.T) {
	before := debug.SetGCPercent(77)
	defer debug.SetGCPercent(before)
	var during atomic.Int64
	prog := &Progress{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := Run(context.Background(), Params{Workload: catalog.FP, QoS: qos.Default, Threads: 1, Params: catalog.Params{Loops: 1 << 27}}, prog)
		assert.NoError(t, err)
	}()
	for {
		if _, ok := prog.CellStart(); ok {
			// SetGCPercent returns the setting it replaces: put it back.
			during.Store(int64(debug.SetGCPercent(-1)))
			break
		}
		runtime.Gosched()
	}
	<-done
	assert.Equal(t, int64(-1), during.Load(), "collector off during the cell")
	assert.Equal(t, 77, debug.SetGCPercent(before), "and back as it was after")
}
