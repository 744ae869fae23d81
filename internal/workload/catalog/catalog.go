// Package catalog lists qoslab's workloads, codecs and sinks: names, units,
// kinds, default and quick sizes, and limits, for every layer that names
// them.
package catalog

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Names of the workloads, as users type them.
const (
	FP         = "fp"
	Int        = "int"
	MMul       = "mmul"
	Pi         = "pi"
	Compress   = "compress"
	Decompress = "decompress"
	Procs      = "procs"
)

// Kind is what a workload's cells are made of, which decides the keys a
// spec entry takes and the charts a run gets.
type Kind int

const (
	// KindCompute workloads run a kernel for a number of loops on each
	// thread.
	KindCompute Kind = iota + 1
	// KindCompression workloads (de)compress generated data of a size,
	// split over the threads, into a sink.
	KindCompression
	// KindProcs runs processes instead of threads, each doing fp loops.
	KindProcs
)

// Limits the agent enforces on a request, so a bad or hostile request cannot
// exhaust the target.
const (
	MaxThreads         = 1024
	MaxProcs           = 256
	MaxLoops           = 1 << 50
	MaxDataBytes int64 = 64 << 30
)

// Sizes of the compression workloads: DefaultSize is the 1 GB test file of
// "Can you game core allocation on Apple silicon?"; QuickSize is what
// `--quick` shrinks it to (see spec.Quick for the budget).
const (
	DefaultSize int64 = 1 << 30
	QuickSize   int64 = 4 << 20
)

// Compressibility of the generated data: the ratio it has under zstd at its
// default level, from MinRatio (uniformly random) to MaxRatio (the most
// compressible the generator is calibrated for).
const (
	DefaultRatio = 3.0
	MinRatio     = 1.0
	MaxRatio     = 10.0
)

// CheckRatio returns an error naming the allowed range when ratio is
// outside it.
func CheckRatio(ratio float64) error {
	if math.IsNaN(ratio) || ratio < MinRatio || ratio > MaxRatio {
		return fmt.Errorf("compression ratio %g: allowed %g (random) .. %g", ratio, MinRatio, MaxRatio)
	}
	return nil
}

// Workload is one workload as every layer sees it.
type Workload struct {
	Name string
	// Unit is what one unit of its work counts: the records' Work.
	Unit string
	Kind Kind
	// About is one line for help and completion.
	About string
	// DefaultLoops is a compute or procs workload's loops when none are
	// given: about a second per thread on a current core (about 0.7 s for
	// fp on a 2-core Xeon, 4 s on an M1 E core). QuickLoops caps them for
	// a smoke run: under half a second per thread in a TCG guest (fp and
	// int 3e6 at 1.3e7 loops/s, mmul 1e4 at 1.8e4/s, procs 2e5 a process,
	// whose start costs more). Both are 0 for compression.
	DefaultLoops, QuickLoops uint64
	// LoopsInTotal: the loops are split over the threads (pi's
	// iterations), not run by each.
	LoopsInTotal bool
}

var workloads = []Workload{
	{FP, "loops", KindCompute, "register-only floating-point loop", 2e8, 3e6, false},
	{Int, "loops", KindCompute, "register-only integer loop", 2e8, 3e6, false},
	// TCG emulates mmul's float32 kernel in software: a small quick size.
	{MMul, "mmul", KindCompute, "16x16 float32 matrix multiply, repeated", 2e5, 1e4, false},
	{Pi, "iterations", KindCompute, "Monte Carlo pi, iterations split over the threads", 1e8, 1e6, true},
	{Compress, "bytes", KindCompression, "compress generated data into a sink", 0, 0, false},
	{Decompress, "bytes", KindCompression, "decompress generated data into a sink", 0, 0, false},
	// procs runs up to 70 processes in the seed experiment: a small quick size.
	{Procs, "loops", KindProcs, "N processes each running fp loops", 2e8, 2e5, false},
}

// All lists the workloads by name.
func All() []Workload {
	out := append([]Workload(nil), workloads...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names lists the workload names in a stable order.
func Names() []string {
	var out []string
	for _, w := range All() {
		out = append(out, w.Name)
	}
	return out
}

// Get returns the workload called name, or an error naming the allowed ones.
func Get(name string) (Workload, error) {
	for _, w := range workloads {
		if w.Name == name {
			return w, nil
		}
	}
	return Workload{}, fmt.Errorf("unknown workload %q: allowed %s", name, strings.Join(Names(), ", "))
}

// ParseList reads comma-separated workload names ("fp,int"), each once,
// in the order given.
func ParseList(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if _, err := Get(name); err != nil {
			return nil, err
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// MaxCountOf is the most threads (or processes) a cell of every one of
// names may have.
func MaxCountOf(names []string) int {
	n := MaxThreads
	for _, name := range names {
		m, _ := Lookup(name).MaxCount()
		n = min(n, m)
	}
	return n
}

// Lookup returns the workload called name; the zero Workload when there
// is none.
func Lookup(name string) Workload {
	w, _ := Get(name)
	return w
}

// IsCompression reports whether name is a compression workload (size,
// codec and sink) rather than one that runs loops.
func IsCompression(name string) bool { return Lookup(name).Kind == KindCompression }

// Fixed-duration cells: every thread runs its kernel until the cell's
// deadline, and the work done is the result.
const (
	MinDuration = 10 * time.Millisecond
	MaxDuration = time.Hour
)

// TakesDuration reports whether the workload can run for a fixed time
// instead of a fixed amount of work: the compute workloads whose loops are
// per thread (pi splits a total, procs runs processes, compression a size).
func (w Workload) TakesDuration() bool { return w.Kind == KindCompute && !w.LoopsInTotal }

// DurationNames lists the workloads that take a duration.
func DurationNames() []string {
	var out []string
	for _, w := range All() {
		if w.TakesDuration() {
			out = append(out, w.Name)
		}
	}
	return out
}

// CheckDuration checks a duration for workload w; the error names the
// value and what is allowed.
func CheckDuration(w Workload, d time.Duration) error {
	if !w.TakesDuration() {
		return fmt.Errorf("%s does not take a duration: allowed for %s (it needs a fixed amount of work)", w.Name, strings.Join(DurationNames(), ", "))
	}
	if d < MinDuration || d > MaxDuration {
		return fmt.Errorf("duration %s: allowed %s..%s", d, MinDuration, MaxDuration)
	}
	return nil
}

// TakesLoops reports whether the workload is sized in loops.
func (w Workload) TakesLoops() bool { return w.Kind == KindCompute || w.Kind == KindProcs }

// MaxCount is the most threads (processes, for procs) a cell may have, and
// what they are called.
func (w Workload) MaxCount() (int, string) {
	if w.Kind == KindProcs {
		return MaxProcs, "processes"
	}
	return MaxThreads, "threads"
}
