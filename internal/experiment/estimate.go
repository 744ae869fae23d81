package experiment

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Machine names a machine as run.json's host Info records it.
type Machine struct{ Hostname, CPUModel string }

// ThisMachine is the machine qoslab runs on.
func ThisMachine() Machine {
	i := agent.ThisMachine()
	return Machine{Hostname: i.GetHostname(), CPUModel: i.GetCpuModel()}
}

// ran says whether the run r was measured on m: its host Info names m's
// host name and CPU model. A run that recorded no host Info (a VM-only
// run, or one written by hand) cannot say, and counts.
func (m Machine) ran(r results.Run) bool {
	t, ok := r.Targets[spec.TargetHost]
	if !ok {
		return true
	}
	i := t.Value()
	return i.Hostname == m.Hostname && i.CPUModel == m.CPUModel
}

// Earlier is what a dry run estimates fixed-work cells from.
type Earlier struct {
	// Dirs are the results directories of earlier runs, oldest first; a
	// newer run's time wins.
	Dirs []string
	// Host is this machine: a run measured on another is passed over.
	Host Machine
	// Calibrate times a loop workload's kernel on this host (CalibrateHost)
	// for cells no earlier run measured; nil calibrates nothing.
	Calibrate func(workload string) (rate float64, took time.Duration, err error)
}

// calibrationTimes are what earlier runs on this machine measured.
type calibrationTimes struct {
	// each is a cell's time per run, by its series key's text.
	each map[string]measured
	// rates are the rates of a cell measured with other work (loops,
	// size or duration), by workKey; work says which ("at 1e7 loops", "in
	// cells of 1s").
	rates map[catalog.SeriesKey]rateSeen
	// factors are, by workload, how many times longer the VM took than
	// the host for the same cells.
	factors map[string]factorSeen
	// runs are the earlier runs that ran in one go: spec name, wall time,
	// cell runs and their measured time, newest last.
	runs []calibrationRun
}

type measured struct {
	each time.Duration
	dir  string
}

// rateSeen is the median over a cell's repeats of its slowest thread's
// rate, the work it was measured at (a cell with no work done is left
// out) and the run that measured it.
type rateSeen struct {
	perThread float64
	work      string
	dir       string
}

type factorSeen struct {
	x   float64
	dir string
}

type calibrationRun struct {
	name, dir            string
	wall, measured, boot time.Duration
	cellRuns             int
}

// latest is the newest earlier run of the spec called name that ran in one
// go, for the time a cell run costs beyond its measured interval.
func (c calibrationTimes) latest(name string) (calibrationRun, bool) {
	for _, r := range slices.Backward(c.runs) {
		if r.name == name && r.cellRuns > 0 && r.wall > r.measured+r.boot {
			return r, true
		}
	}
	return calibrationRun{}, false
}

// workKey is k without the work it was asked to do (loops, duration,
// size) or where its sink was, so cells that differ only there match.
func workKey(k catalog.SeriesKey) catalog.SeriesKey {
	k.Loops, k.Duration, k.SizeBytes, k.SinkPath = 0, 0, 0, ""
	return k
}

// threadWork is the work one thread (process) of c does: its loops (split
// over the threads for pi), or its share of the size.
func threadWork(c PlannedRun) float64 {
	switch {
	case catalog.IsCompression(c.Workload):
		return float64(c.SizeBytes) / float64(max(c.Threads, 1))
	case catalog.Lookup(c.Workload).LoopsInTotal:
		return float64(c.Loops) / float64(max(c.Threads, 1))
	}
	return float64(c.Loops)
}

// readEarlier reads what the earlier runs of e measured on e.Host with
// spinners contention spinners: per cell, the median over its repeats of
// the interval from its first thread's start to its last one's end, and
// its rates and the VM's factors. A VM cell counts only from a run whose VM
// ran with accel (any when accel is ""), as an emulated guest is many
// times slower than an accelerated one. Directories that cannot be read
// are passed over.
func readEarlier(e Earlier, accel string, spinners int) calibrationTimes {
	out := calibrationTimes{each: map[string]measured{}, rates: map[catalog.SeriesKey]rateSeen{}, factors: map[string]factorSeen{}}
	for _, path := range e.Dirs {
		d, err := results.Open(path)
		if err != nil || !e.Host.ran(d.Run) {
			continue
		}
		recs, _, err := d.ReadSamples()
		if err != nil || len(recs) == 0 {
			continue
		}
		machines := d.Run.Machines.Value()
		vmAccel, boot := machines[spec.TargetVM].Accel, time.Duration(machines[spec.TargetVM].BootNs)
		runs := cellRuns(recs)
		var total time.Duration
		byCell := map[string][]time.Duration{}
		slowest := map[catalog.SeriesKey][]float64{}
		for _, r := range runs {
			total += r.interval
			if (r.target == spec.TargetVM && accel != "" && vmAccel != accel) || r.contention != spinners {
				continue
			}
			byCell[r.cell] = append(byCell[r.cell], r.interval)
			if r.slowest > 0 {
				slowest[r.key] = append(slowest[r.key], r.slowest)
			}
		}
		for cell, ts := range byCell {
			sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
			out.each[cell] = measured{each: ts[len(ts)/2], dir: path}
		}
		medians := map[catalog.SeriesKey]float64{}
		for k, rs := range slowest {
			sort.Float64s(rs)
			medians[k] = rs[(len(rs)-1)/2]
			work := "at " + WorkText(PlannedRun{Workload: k.Workload, Params: k.Params})
			if k.Duration > 0 {
				work = "in cells of " + k.Duration.String()
			}
			out.rates[workKey(k)] = rateSeen{perThread: medians[k], work: work, dir: path}
		}
		for w, x := range vmFactors(medians) {
			out.factors[w] = factorSeen{x: x, dir: path}
		}
		if r := d.Run; r.Complete() && len(r.Resumed) == 0 && !r.Started.IsZero() {
			out.runs = append(out.runs, calibrationRun{name: r.Name, dir: path, wall: r.Finished.Sub(r.Started), cellRuns: len(runs), measured: total, boot: boot})
		}
	}
	return out
}

// cellRun is one earlier cell run as an estimate sees it.
type cellRun struct {
	cell, target string
	key          catalog.SeriesKey
	contention   int
	interval     time.Duration
	// slowest is its slowest thread's rate (work a second).
	slowest float64
}

// cellRuns groups records into their cell runs.
func cellRuns(recs []results.Record) []cellRun {
	type run struct {
		cell   string
		repeat int
	}
	index := map[run]int{}
	var out []cellRun
	first, last := map[run]int64{}, map[run]int64{}
	for _, r := range recs {
		k := run{r.Cell, r.Repeat}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, cellRun{cell: r.Cell, target: r.Target, key: r.RunKey().SeriesKey, contention: r.Contention, slowest: r.Rate})
			first[k] = r.StartNs
		}
		first[k] = min(first[k], r.StartNs)
		last[k] = max(last[k], r.EndNs)
		out[i].slowest = min(out[i].slowest, r.Rate)
	}
	for k, i := range index {
		out[i].interval = time.Duration(last[k] - first[k])
	}
	return out
}

// vmFactors are, by workload, the median over the cells a run measured
// both on the host and in its VM of how many times longer the VM's
// slowest thread took for the same work.
func vmFactors(medians map[catalog.SeriesKey]float64) map[string]float64 {
	xs := map[string][]float64{}
	for k, vm := range medians {
		if k.Target != spec.TargetVM || vm <= 0 {
			continue
		}
		h := k
		h.Target = spec.TargetHost
		if host, ok := medians[h]; ok {
			xs[k.Workload] = append(xs[k.Workload], host/vm)
		}
	}
	out := map[string]float64{}
	for w, x := range xs {
		sort.Float64s(x)
		out[w] = x[(len(x)-1)/2]
	}
	return out
}

// estimator works out what one run of a cell takes, and where that comes
// from, for a dry run.
type estimator struct {
	times    calibrationTimes
	spinners int
	cpus     int
	accel    string
	// calibrate and what it found, by workload (CalibrateHost).
	calibrate  func(string) (float64, time.Duration, error)
	calibrated map[string]calibration
}

type calibration struct {
	rate float64
	took time.Duration
	err  error
}

func newEstimator(e Earlier, accel string, spinners int) *estimator {
	cpus := 1
	if allowed, err := workload.AllowedCPUs(); err == nil && len(allowed) > 0 {
		cpus = len(allowed)
	}
	return &estimator{times: readEarlier(e, accel, spinners), spinners: spinners, cpus: cpus, accel: accel,
		calibrate: e.Calibrate, calibrated: map[string]calibration{}}
}

// plan sets sp's time per run from c: its duration, the same cell an
// earlier run measured, its rate measured at other work, a calibration on
// this host (the VM's scaled by the factor an earlier run measured);
// else it says why the time is unknown.
func (e *estimator) plan(sp *SeriesPlan, c PlannedRun) {
	if c.Duration > 0 {
		sp.Each, sp.Source = c.Duration, "duration"
		return
	}
	each, source, how, ok := e.measured(c)
	why := ""
	switch {
	case ok:
	case c.Target == spec.TargetVM:
		each, source, how, why = e.scaled(c)
	default:
		each, how, why = e.calibration(c)
		source = "calibration"
	}
	if each == 0 {
		sp.Why = why
		return
	}
	sp.Each, sp.Source, sp.How = each, source, how
}

// measured is c's time per run from earlier runs on this machine: the
// same cell's (how ""), or its rate at other work; false when none
// measured it.
func (e *estimator) measured(c PlannedRun) (each time.Duration, source, how string, ok bool) {
	if t, ok := e.times.each[c.SeriesKey()]; ok {
		return t.each, t.dir, "", true
	}
	if r, ok := e.times.rates[workKey(c.Series())]; ok {
		return perRun(threadWork(c), r.perThread), r.dir, fmt.Sprintf("its rate %s in %s", r.work, r.dir), true
	}
	return 0, "", "", false
}

// perRun is how long work takes at rate (a second).
func perRun(work, rate float64) time.Duration {
	return time.Duration(work / rate * float64(time.Second))
}

// calibration is a host cell's time from a calibration of its workload
// on this host, or why there is none.
func (e *estimator) calibration(c PlannedRun) (time.Duration, string, string) {
	if e.spinners > 0 {
		return 0, "", fmt.Sprintf("no earlier run here measured it %s, which a calibration cannot tell", contentionText(e.spinners))
	}
	if catalog.IsCompression(c.Workload) {
		return 0, "", "no earlier run here measured it " + contentionText(e.spinners) + ", and compression is not calibrated"
	}
	if e.calibrate == nil {
		return 0, "", "no earlier run here measured it " + contentionText(e.spinners)
	}
	cal, ok := e.calibrated[c.Workload]
	if !ok {
		cal.rate, cal.took, cal.err = e.calibrate(c.Workload)
		e.calibrated[c.Workload] = cal
	}
	if cal.err != nil {
		return 0, "", "no earlier run here measured it, and calibrating failed: " + cal.err.Error()
	}
	// Threads beyond the CPUs share them.
	perThread := cal.rate * min(1, float64(e.cpus)/float64(max(c.Threads, 1)))
	return perRun(threadWork(c), perThread), fmt.Sprintf("calibration: %s ran %s here at the default class", c.Workload, roundMs(cal.took)), ""
}

// scaled is a VM cell's time from its host twin's (earlier runs', else a
// calibration's) times the VM's factor an earlier run measured, and where
// it comes from ("calibration" when one took part), or why there is none.
func (e *estimator) scaled(c PlannedRun) (each time.Duration, source, how, why string) {
	f, ok := e.times.factors[c.Workload]
	if !ok {
		vm := "a VM"
		if e.accel != "" {
			vm = "a " + e.accel + " VM"
		}
		return 0, "", "", fmt.Sprintf("no earlier run here measured %s in %s and on the host %s, to scale by", c.Workload, vm, contentionText(e.spinners))
	}
	h := c
	h.Target = spec.TargetHost
	host, from, _, measured := e.measured(h)
	if measured {
		how, source = "the host's time from "+from, f.dir
	} else {
		host, how, why = e.calibration(h)
		source = "calibration"
	}
	if host == 0 {
		return 0, "", "", "the host's time is unknown too: " + why
	}
	return time.Duration(float64(host) * f.x), source, fmt.Sprintf("%s, x %.3g (vm/host in %s)", how, f.x, f.dir), ""
}

// contentionText says how many spinners a plan runs, for its reasons.
func contentionText(spinners int) string {
	if spinners == 0 {
		return "without contention"
	}
	return fmt.Sprintf("with %d contention spinners", spinners)
}

// roundMs rounds a calibration's time to whole milliseconds.
func roundMs(d time.Duration) string {
	return strings.TrimSuffix(d.Round(time.Millisecond).String(), ".000")
}
