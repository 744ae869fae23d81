package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// DryRun is what a run of a spec would do, worked out without doing any of
// it: no VM boots, no agent, spinner or QEMU starts, no image is built, no
// kernel fetched and no file written. It only reads (the image store, the
// failed KVM probes remembered, earlier results).
type DryRun struct {
	Spec spec.Spec
	// Chosen says why Spec was chosen for this machine when the user
	// chose none (the plan's experiment line); "" when the user did.
	// Unfit says why the spec the user chose may show no effect on this
	// machine, "" when it may show one.
	Chosen, Unfit string
	// Seeded says whether the order is the one the run will use: an
	// interleaved spec without a seed gets one when the run starts, and
	// Cells is then one example of its order.
	Seeded bool
	// Cells are the cell runs to make, in order (for a resume, those not
	// measured yet); Done counts the timed ones a resume skips.
	Cells []PlannedRun
	Done  int
	// Series are the cells of the plan, each once, in the order they first
	// run, with how many runs each gets and what one is estimated to take.
	Series []SeriesPlan
	// VM is the VM the run would boot or attach; nil without a vm target.
	VM *VMPlan
	// Spinners is how many contention spinners would run on the host (all:
	// one per CPU qoslab may use), and SpinnerCPUs the CPUs they would be
	// pinned to, in order.
	Spinners    int
	SpinnerCPUs []int
	// Estimate is the measured time the plan is expected to take.
	Estimate Estimate
	// Looks are the repeats per cell at each look the spec's max_repeats
	// allows: one entry when the run adds none (max_repeats 0, or not both
	// host and vm to judge a verdict on).
	Looks []int
	// Longest is the estimate of the longest the run could take, every
	// cell at the cap's repeats, and LongestRuns its cell runs (timed and
	// warm-ups); zero when the run adds no repeats.
	Longest     Estimate
	LongestRuns int
}

// SeriesPlan is one cell of the plan and its runs.
type SeriesPlan struct {
	Cell PlannedRun
	// Runs are its timed runs, Warmups its untimed ones.
	Runs, Warmups int
	// Each is what one run is expected to last (measured interval), 0 when
	// unknown; Source says where it comes from: "duration" for a
	// fixed-duration cell, "calibration" when a calibration on this host
	// took part, else the earlier run that measured it. How says how,
	// when not from that run's own measure of the cell ("its rate at 1e7
	// loops in DIR"); Why says why Each is unknown.
	Each             time.Duration
	Source, How, Why string
}

// VMPlan is the VM a run would use.
type VMPlan struct {
	// Named is the named VM the run would attach to instead of booting one.
	Named   string
	Backend string
	// Model is the device model, "" for the backend's own.
	Model string
	Image string
	// ImageProblem says why the image could not be booted as it is (not
	// built, corrupt), "" when it can; Kernel is the image's kernel version.
	ImageProblem string
	Kernel       string
	CPUs         int
	MemoryMiB    int
	DiskBytes    int64
	// Accel is the accelerator it would boot with, and AccelWhy why (or on
	// what condition); AccelProblem says why it could not boot at all.
	Accel, AccelWhy, AccelProblem string
	// Notes are what would be changed to fit this host.
	Notes []string
}

// Estimate is a plan's measured time: what can be known before running.
type Estimate struct {
	// Known adds up the runs whose time is known (fixed-duration cells,
	// cells an earlier run measured, and calibrated ones); Calibrated is
	// the part of it a calibration on this host took part in; Unknown
	// counts the other runs.
	Known      time.Duration
	Calibrated time.Duration
	Unknown    int
	// PerRunOverhead is what each cell run cost beyond its measured
	// interval in the newest earlier run of the same spec that ran in one
	// go (request, process start, telemetry; 0 when there is none), and
	// OverheadFrom that run's directory.
	PerRunOverhead time.Duration
	OverheadFrom   string
	// Boot is how long that run's VM took to boot (0: unknown, or no VM).
	Boot time.Duration
}

// Total is the estimated wall time of the cell runs, overhead and boot
// included; exact is false when some runs' time is unknown (Total then
// covers the others only).
func (e Estimate) Total(runs int) (total time.Duration, exact bool) {
	return e.Known + time.Duration(runs)*e.PerRunOverhead + e.Boot, e.Unknown == 0
}

// PlanDryRun works out what running s would do on this machine, with env
// as Execute would get it; resume is the results directory a --resume
// would finish ("" for a new run), and calibrate the results directories
// to take earlier cell times from (those measured on this machine), a
// brief calibration on this host estimating the loop cells none measured.
func PlanDryRun(s spec.Spec, env guestvm.Env, resume string, calibrate []string) (*DryRun, error) {
	return PlanDryRunFrom(s, env, resume, Earlier{Dirs: calibrate, Host: ThisMachine(), Calibrate: CalibrateHost})
}

// PlanDryRunFrom is PlanDryRun with its estimates from earlier.
func PlanDryRunFrom(s spec.Spec, env guestvm.Env, resume string, earlier Earlier) (*DryRun, error) {
	d := &DryRun{Spec: s, Seeded: s.Seed != nil || s.Order == spec.OrderSequential}
	cells, _ := Plan(s)
	if resume != "" {
		var err error
		if cells, d.Done, err = unfinished(s, cells, resume); err != nil {
			return nil, err
		}
		d.Seeded = true
	}
	d.Cells = cells
	var err error
	if d.Spinners, err = s.Contention.Resolve(); err != nil {
		return nil, err
	}
	if d.Spinners > 0 {
		if allowed, err := workload.AllowedCPUs(); err == nil {
			d.SpinnerCPUs = workload.SpinnerCPUs(d.Spinners, allowed)
		}
	}
	if slices.Contains(s.Targets, spec.TargetVM) {
		d.VM = planVM(s, env)
	}
	accel := ""
	if d.VM != nil {
		accel = d.VM.Accel
	}
	est := newEstimator(earlier, accel, d.Spinners)
	d.Series = seriesPlans(s, cells, est)
	d.Estimate = estimate(d.Series, s.Name, est.times, d.VM)
	d.Looks = looksOf(s)
	if last := d.Looks[len(d.Looks)-1]; len(d.Looks) > 1 {
		// The longest run: every cell at the cap's repeats, as if every
		// look found every verdict undecided at every thread count.
		capped := s
		capped.Repeats = last
		all, _ := Plan(capped)
		d.Longest, d.LongestRuns = estimate(seriesPlans(capped, all, est), s.Name, est.times, d.VM), len(all)
	}
	return d, nil
}

// estimate is what series take in measured time, and the overhead per
// cell run and boot of the newest earlier run of the spec named name.
func estimate(series []SeriesPlan, name string, times calibrationTimes, vm *VMPlan) Estimate {
	var e Estimate
	for _, sp := range series {
		n := sp.Runs + sp.Warmups
		if sp.Each > 0 {
			e.Known += time.Duration(n) * sp.Each
			if sp.Source == "calibration" {
				e.Calibrated += time.Duration(n) * sp.Each
			}
		} else {
			e.Unknown += n
		}
	}
	if r, ok := times.latest(name); ok {
		e.PerRunOverhead, e.OverheadFrom = (r.wall-r.measured-r.boot)/time.Duration(r.cellRuns), r.dir
		if vm != nil && vm.Named == "" {
			e.Boot = r.boot
		}
	}
	return e
}

// unfinished are the cells a --resume of the run in the results directory
// resume would still make (the runner skips the timed runs it finished),
// with the blocks of its looks after them, and how many timed runs it
// skips.
func unfinished(s spec.Spec, cells []PlannedRun, resume string) ([]PlannedRun, int, error) {
	dir, err := results.Open(resume)
	if err != nil {
		return nil, 0, err
	}
	for _, lk := range dir.Run.Looks {
		cells = append(cells, lookCells(s, lk)...)
	}
	recs, _, err := dir.ReadSamples()
	if err != nil {
		return nil, 0, fmt.Errorf("resume %s: %w", resume, err)
	}
	finished := results.FinishedRuns(recs)
	skipped := 0
	cells = slices.DeleteFunc(cells, func(c PlannedRun) bool {
		if c.Timed() && finished[c.RunKey()] {
			skipped++
			return true
		}
		return false
	})
	return cells, skipped, nil
}

// seriesPlans lays out the cells of s as the series they run, each once,
// in the spec's order (entry, class, threads, target), with its runs and
// what one is expected to take, as est works it out.
func seriesPlans(s spec.Spec, cells []PlannedRun, est *estimator) []SeriesPlan {
	var out []SeriesPlan
	index := map[string]int{}
	for _, c := range cells {
		k := c.SeriesKey()
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			sp := SeriesPlan{Cell: c}
			sp.Cell.Repeat, sp.Cell.Warmup = 0, 0
			est.plan(&sp, c)
			out = append(out, sp)
		}
		if c.Timed() {
			out[i].Runs++
		} else {
			out[i].Warmups++
		}
	}
	rank := func(c PlannedRun) []int {
		e := s.Matrix[c.Entry]
		return []int{c.Entry, slices.Index(e.QoS, c.QoS), slices.Index(e.Threads, c.Threads), slices.Index(s.Targets, c.Target)}
	}
	slices.SortStableFunc(out, func(a, b SeriesPlan) int { return slices.Compare(rank(a.Cell), rank(b.Cell)) })
	return out
}

// planVM works out the VM a run of s would use, as startVM would, without
// booting it.
func planVM(s spec.Spec, env guestvm.Env) *VMPlan {
	if env.Name != "" {
		return &VMPlan{Named: env.Name}
	}
	v, notes := guestvm.Fit(s.VM, env)
	p := &VMPlan{Backend: v.Backend, Model: v.Model, Image: v.Image, CPUs: v.CPUs, Notes: notes}
	p.MemoryMiB, p.DiskBytes = spec.VMSize(s)
	img, err := guestvm.LoadImage(env.Store, v.Image)
	if err != nil {
		p.ImageProblem = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	p.Kernel = img.KernelVersion
	if err := guestvm.CheckModel(v); err != nil {
		p.AccelProblem = err.Error()
		return p
	}
	backend, err := registry.New(v.Backend, env.Registry())
	if err != nil {
		p.AccelProblem = err.Error()
		return p
	}
	planner, ok := backend.(interface {
		PlanAccel(hv.Spec) (string, string, error)
	})
	if !ok {
		p.Accel, p.AccelWhy = v.Backend, "the framework's own"
		return p
	}
	hs := hv.Spec{Image: img, CPUs: v.CPUs, MemoryMiB: p.MemoryMiB, DiskBytes: p.DiskBytes, Accel: v.Accel, Model: v.Model}
	if hs.Image.Arch == "" {
		// Not built yet: the recipe's image for this machine's arch.
		hs.Image.Arch = imageArch(v.Image)
	}
	if p.Accel, p.AccelWhy, err = planner.PlanAccel(hs); err != nil {
		p.AccelProblem = err.Error()
	}
	return p
}

// imageArch guesses an image's arch from its name ("linux-arm64"), this
// machine's when the name says none.
func imageArch(name string) string {
	for _, a := range []string{"amd64", "arm64"} {
		if strings.HasSuffix(name, "-"+a) || name == a {
			return a
		}
	}
	return ""
}

// Writes lists what a run of s into a new directory under parent (or the
// directory resumed) would write, as it would name it.
func (d *DryRun) Writes(parent, resume string) []string {
	dir := filepath.Join(parent, d.Spec.Name+"-<UTC time>")
	if resume != "" {
		dir = resume
	}
	files := []string{results.RunFile, results.SamplesFile}
	if d.Spec.TelemetryMs > 0 {
		files = append(files, results.TelemetryFile)
	}
	files = append(files, results.SummaryJSONFile, results.SummaryCSVFile, results.SummaryMDFile, results.PlotsDir+"/*.png", results.ReportFile, "report.md")
	if d.VM != nil && d.VM.Named == "" {
		files = append(files, results.VMConsoleFile)
	}
	out := []string{dir + string(os.PathSeparator)}
	for _, f := range files {
		out = append(out, filepath.Join(dir, f))
	}
	return out
}

// WorkText is what one run of the cell does, its parameters as a reader
// sees them (catalog.ParamsShown): "loops 5e6", "duration 250ms",
// "size 8MiB, ratio 3, zstd, sink file".
func WorkText(c PlannedRun) string {
	return strings.Join(catalog.ParamsShown(c.Params), ", ")
}

// RecordedSpec is the spec the run in the results directory at path
// started with, read without locking or changing anything (a dry run of
// its resume).
func RecordedSpec(path string) (spec.Spec, error) {
	d, err := results.Open(path)
	if err != nil {
		return spec.Spec{}, err
	}
	if d.Run.Spec.IsZero() {
		return spec.Spec{}, fmt.Errorf("%s: %w", path, errNoSpec)
	}
	return d.Run.Spec.Value(), nil
}
