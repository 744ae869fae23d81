package workload

import (
	"context"
	"runtime"
	"sync"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload/kernel"
)

// Spin runs n threads at the default class doing fp loops until ctx ends: the
// contention that shows what a class is worth when cores are scarce. ready gets
// each thread's applied class once all are spinning.
func Spin(ctx context.Context, n int, ready func([]qos.Applied)) {
	applied := make([]qos.Applied, n)
	var started, stopped sync.WaitGroup
	started.Add(n)
	stopped.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer stopped.Done()
			runtime.LockOSThread()
			applied[i] = qos.ApplySelf(qos.Default)
			started.Done()
			for ctx.Err() == nil {
				kernel.FP(loopChunk)
			}
		}()
	}
	started.Wait()
	ready(applied)
	stopped.Wait()
}
