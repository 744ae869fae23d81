package workload

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload/kernel"
)

// WorkerArg is the first argument that puts the agent binary in worker mode:
// one process of a procs cell.
const WorkerArg = "__qoslab-worker"

// workerReport is what a worker prints on stdout: first a ready line, then
// its measured interval on the system-wide monotonic clock.
type workerReport struct {
	Ready   bool        `json:"ready,omitempty"`
	StartNs int64       `json:"start_mono_ns,omitempty"`
	EndNs   int64       `json:"end_mono_ns,omitempty"`
	Work    float64     `json:"work,omitempty"`
	CPUNs   int64       `json:"cpu_ns,omitempty"`
	QoS     qos.Applied `json:"qos"`
	CPUs    []int       `json:"cpus,omitempty"`
	Err     string      `json:"error,omitempty"`
}

// WorkerMain is the worker process: apply the class to its only measuring
// thread, say ready, wait for the start pipe (fd 3) to close, run fp loops and
// report. It returns the process exit status.
func WorkerMain(args []string, stdout io.Writer) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	class := fs.Int("qos", int(qos.Default), "QoS class")
	loops := fs.Uint64("loops", 0, "fp loops")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	runtime.LockOSThread()
	enc := json.NewEncoder(stdout)
	rep := workerReport{Ready: true, QoS: qos.ApplySelf(qos.Class(*class))}
	if err := enc.Encode(rep); err != nil {
		return 1
	}
	startPipe := os.NewFile(3, "start")
	if startPipe == nil {
		_ = enc.Encode(workerReport{Err: "no start pipe on fd 3"})
		return 1
	}
	// EOF on the start pipe is the signal: the parent closes it for all at once.
	_, _ = io.Copy(io.Discard, startPipe)

	cpus := newCPUSet(runtime.NumCPU())
	var sum float64
	// The thread's CPU clock just outside the interval, as a measuring
	// thread of the other workloads reads it: the process's work is this
	// locked thread's (the runtime's own threads are not the workload).
	cpuStart := threadCPUNow()
	start := monoNow()
	for done := uint64(0); done < *loops; {
		n := min(uint64(loopChunk), *loops-done)
		sum += kernel.FP(n)
		done += n
		cpus.sample()
	}
	end := monoNow()
	cpuEnd := threadCPUNow()
	_ = sum
	rep = workerReport{StartNs: start, EndNs: end, Work: float64(*loops), CPUNs: cpuSpent(cpuStart, cpuEnd), QoS: rep.QoS, CPUs: cpus.list()}
	if err := enc.Encode(rep); err != nil {
		return 1
	}
	return 0
}

// procWorker is one worker process of a procs cell and its report.
type procWorker struct {
	cmd *exec.Cmd
	out *bufio.Reader
	rep workerReport
}

// runProcs starts p.Threads worker processes (this executable in worker mode),
// waits until each has applied its class, then releases them together.
func runProcs(ctx context.Context, p Params, prog *Progress) (_ Result, err error) {
	// A worker gets its parent-death signal when the thread that forked it
	// ends: keep that thread to this goroutine until every worker is
	// reaped, so no goroutine that ends locked on it (a sampler) takes the
	// workers with it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	exe, err := os.Executable()
	if err != nil {
		return Result{}, fmt.Errorf("procs: find own executable: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog.setTotal(uint64(p.Threads))

	startR, startW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("procs: start pipe: %w", err)
	}
	defer startW.Close()

	var workers []*procWorker
	defer func() {
		if err != nil {
			// Workers still waiting for the start pipe would wait for
			// good, and the others need not finish.
			cancel()
		}
		for _, w := range workers {
			_ = w.cmd.Wait()
		}
	}()
	workers, err = startWorkers(ctx, exe, p, startR, prog)
	startR.Close()
	if err != nil {
		return Result{}, err
	}
	for i, w := range workers {
		if err := w.read(i); err != nil {
			return Result{}, err
		}
	}
	cellStart := monoNow()
	prog.setCellStart(cellStart)
	startW.Close()

	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.read(i)
			prog.add(1)
		}()
	}
	wg.Wait()
	return Result{Records: procRecords(workers, errs, cellStart)}, errors.Join(errs...)
}

// startWorkers starts p.Threads worker processes, each with the start
// pipe's read end as fd 3, and registers them with prog. On an error it
// returns the workers it did start, for the caller to reap.
func startWorkers(ctx context.Context, exe string, p Params, startR *os.File, prog *Progress) ([]*procWorker, error) {
	workers := make([]*procWorker, 0, p.Threads)
	args := []string{WorkerArg, "-qos", strconv.Itoa(int(p.QoS)), "-loops", strconv.FormatUint(p.Loops, 10)}
	for i := 0; i < p.Threads; i++ {
		cmd := exec.CommandContext(ctx, exe, args...) //nolint:gosec // G204: this executable, in worker mode, with numbers as arguments
		cmd.ExtraFiles = []*os.File{startR}
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = workerProcAttr()
		out, err := cmd.StdoutPipe()
		if err != nil {
			return workers, fmt.Errorf("procs: worker %d: %w", i, err)
		}
		if err := cmd.Start(); err != nil {
			return workers, fmt.Errorf("procs: start worker %d: %w", i, err)
		}
		workers = append(workers, &procWorker{cmd: cmd, out: bufio.NewReader(out)})
		prog.addWorker(Worker{PID: cmd.Process.Pid, TID: cmd.Process.Pid, Role: fmt.Sprintf("proc %d", i)})
	}
	return workers, nil
}

// read takes worker i's next report line (ready, then its interval) into
// w.rep.
func (w *procWorker) read(i int) error {
	line, err := w.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("procs: worker %d (pid %d) ended without a report: %w", i, w.cmd.Process.Pid, err)
	}
	var rep workerReport
	if err := json.Unmarshal(line, &rep); err != nil {
		return fmt.Errorf("procs: worker %d: bad report %q: %w", i, line, err)
	}
	if rep.Err != "" {
		return fmt.Errorf("procs: worker %d: %s", i, rep.Err)
	}
	w.rep = rep
	return nil
}

// procRecords makes the records of the workers that reported, their
// intervals made relative to cellStart.
func procRecords(workers []*procWorker, errs []error, cellStart int64) []Record {
	var recs []Record
	for i, w := range workers {
		if errs[i] != nil {
			continue
		}
		s := span{start: w.rep.StartNs - cellStart, end: w.rep.EndNs - cellStart, work: w.rep.Work, cpuNs: w.rep.CPUNs}
		r := newRecord(i, s, w.rep.QoS, w.rep.CPUs)
		r.PID = w.cmd.Process.Pid
		recs = append(recs, r)
	}
	return recs
}
