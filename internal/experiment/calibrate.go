package experiment

import (
	"fmt"
	"runtime"
	"time"

	"github.com/qoslab/qoslab/internal/workload/catalog"
	"github.com/qoslab/qoslab/internal/workload/kernel"
)

// Calibration bounds: a calibration runs its kernel in rounds of growing
// loop counts until a round lasts calibrationRound, and gives up past
// calibrationBudget, so a workload's costs well under a second.
const (
	calibrationRound  = 20 * time.Millisecond
	calibrationBudget = 200 * time.Millisecond
)

// CalibrateHost times the kernel of the loop workload called name on one
// thread of this process, at the class the controller runs at, for a dry
// run's estimate of cells no earlier run measured: its rate (loops a
// second; procs' is fp's, without starting a process) and how long the
// calibration ran. Compression is not calibrated: its time depends on the
// data, the codec and the sink, which a loop does not tell.
func CalibrateHost(name string) (rate float64, took time.Duration, err error) {
	loop, err := calibrationLoop(name)
	if err != nil {
		return 0, 0, err
	}
	began := time.Now()
	for n := uint64(1e4); ; n *= 4 {
		t0 := time.Now()
		loop(n)
		round := time.Since(t0)
		if round >= calibrationRound || time.Since(began) >= calibrationBudget {
			return float64(n) / round.Seconds(), time.Since(began), nil
		}
	}
}

// calibrationLoop is the kernel a calibration of the workload called name
// runs n loops of; its results are kept alive, so the compiler cannot drop
// the loops.
func calibrationLoop(name string) (func(n uint64), error) {
	switch name {
	case catalog.FP, catalog.Procs:
		return func(n uint64) { runtime.KeepAlive(kernel.FP(n)) }, nil
	case catalog.Int:
		return func(n uint64) { runtime.KeepAlive(kernel.Int(n)) }, nil
	case catalog.Pi:
		return func(n uint64) {
			r := kernel.NewPiRNG(1, 0)
			runtime.KeepAlive(kernel.PiHits(&r, n))
		}, nil
	case catalog.MMul:
		if err := kernel.MMulInit(); err != nil {
			return nil, err
		}
		return func(n uint64) {
			var c, a, b kernel.Matrix16
			a[0], b[0] = 1, 1
			kernel.MMul(n, &c, &a, &b)
			runtime.KeepAlive(c)
		}, nil
	}
	return nil, fmt.Errorf("%s is not calibrated: only loop workloads are (%s, %s, %s, %s, %s)", name, catalog.FP, catalog.Int, catalog.MMul, catalog.Pi, catalog.Procs)
}
