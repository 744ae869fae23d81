// Package spec is the experiment spec language: the YAML a user writes
// (ParseSpec, LoadSpec) or picks among the built-in specs (DefaultSpec),
// read strictly with every problem reported at once, its defaults filled
// in and its values checked (Validate); the VM size it implies (VMSize),
// its smoke-run form (Shrink), and the reference of its keys that
// docs/spec.md is written from.
package spec

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/inputfile"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/suggest"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Targets an experiment measures on.
const (
	TargetHost = "host" // the agent as a child process of the controller
	TargetVM   = "vm"   // the same agent inside a VM the run boots
)

// Orders a plan can lay cells out in; see Plan.
const (
	OrderInterleaved = "interleaved"
	OrderSequential  = "sequential"
)

// Defaults of a spec's optional settings.
const (
	// DefaultRepeats is 6: with 3 against 3 the two-sided rank test's
	// smallest p is 0.1, so no difference could ever be significant.
	DefaultRepeats = 6
	// DefaultMaxRepeatsFactor times repeats is the cap of a spec that sets
	// no max_repeats: up to three looks, each adding repeats as many again.
	DefaultMaxRepeatsFactor = 3
	// DefaultWarmup is 0 because no workload carries state from one run to
	// the next that a warm-up would settle: fp and int touch registers only,
	// and the compression workloads generate their input before the clock
	// starts. A spec asks for warm-ups when first-run effects (a VM's sparse
	// scratch disk allocating blocks on the host, say) should be absorbed.
	DefaultWarmup = 0
	// defaultVMCPUs is the four-core VM of [game] (docs/references.md).
	defaultVMCPUs = 4
	// DefaultDataSeed is the data seed of a spec that sets none (and of every
	// run recorded before specs had one).
	DefaultDataSeed = 1
)

// Limits a spec is checked against.
const (
	maxRepeats  = 1000
	maxWarmup   = 100
	maxVMCPUs   = 256
	minVMMemory = 128 << 20
	maxVMMemory = 1 << 40
	maxVMDisk   = 1 << 42
	maxNameLen  = 64
	// Below 10 ms the sampler's own cost and the scheduler's tick blur what
	// it measures; above 10 s it says nothing about a cell.
	minTelemetryMs = 10
	maxTelemetryMs = 10000
	// A margin of 10x either way would call anything subsumed.
	maxAbsoluteMargin = 10
	// Below a second a timeout would end cells that are merely starting;
	// above a day it is no limit.
	minCellTimeout = time.Second
	maxCellTimeout = 24 * time.Hour
)

// Spec is a whole experiment: where to measure, what, and how often. Specs
// come from YAML (ParseSpec, LoadSpec, DefaultSpec) with every default
// filled in, so a recorded Spec says exactly what ran.
type Spec struct {
	// Name names the experiment and its results directory.
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Targets     []string `json:"targets"` // TargetHost, TargetVM, in the order given
	VM          VMSpec   `json:"vm"`
	// Matrix lists the cells to measure; each entry expands to its QoS
	// classes times its thread counts.
	Matrix  []MatrixEntry `json:"matrix"`
	Repeats int           `json:"repeats"`
	// MaxRepeats caps the repeats per cell a run may add, in blocks, while
	// a verdict is undecided because an interval is too wide (the run's
	// looks; docs/design.md): 0 adds none, else at least Repeats. A spec
	// that leaves it out gets DefaultMaxRepeatsFactor times Repeats; a
	// recorded spec without it (runs from before looks) had none.
	MaxRepeats int `json:"max_repeats"`
	// Warmup is the number of untimed runs of each cell on each target,
	// placed just before that cell's first timed run there.
	Warmup int    `json:"warmup"`
	Order  string `json:"order"` // OrderInterleaved or OrderSequential
	// Seed seeds the interleaved shuffle; nil lets Plan pick one, which the
	// run records so the plan can be rebuilt.
	Seed *uint64 `json:"seed,omitempty"`
	// Contention is how many default-priority spinner threads run on the
	// host, outside any VM, for the whole run, each pinned to a CPU; or
	// contention.All, one on every CPU qoslab may use.
	Contention contention.SpinnerCount `json:"contention"`
	// Quick is set by Shrink: loops and sizes were shrunk for a smoke run.
	Quick bool `json:"quick,omitempty"`
	// TelemetryMs is the telemetry sampling interval while each timed cell
	// runs, on the host and in the guest; 0 turns telemetry off.
	TelemetryMs int `json:"telemetry_ms"`
	// DataSeed seeds the compression workloads' generated input and pi's
	// random numbers, so every run of a spec measures the same data.
	DataSeed uint64 `json:"data_seed"`
	// Verdict holds the margins the verdict judges the VM's QoS effect
	// against; zero fields take analysis.DefaultMargins.
	Verdict analysis.Margins `json:"verdict"`
	// CellTimeout ends a cell run that has not finished after it, failing
	// the run with what finished kept (resumable); 0: no limit.
	CellTimeout time.Duration `json:"cell_timeout_ns,omitempty"`
}

// VMSpec describes the VM of the vm target. Zero values mean "decide at run
// time": the machine's default backend and image, KVM/hvf when they work,
// and memory and disk sized for the matrix.
type VMSpec struct {
	Backend     string `json:"backend,omitempty"` // qemu, vz; "" for this machine's default
	Image       string `json:"image,omitempty"`   // "" for the built-in recipe's image
	CPUs        int    `json:"cpus"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	DiskBytes   int64  `json:"disk_bytes,omitempty"`
	Accel       string `json:"accel,omitempty"` // kvm, tcg, hvf; "" to probe
	// Model is the device model: "" (or hv.ModelDefault) for the backend's
	// own, hv.ModelVZ for Virtualization.framework's Linux guest layout
	// emulated by the qemu backend (arm64 images).
	Model string `json:"model,omitempty"`
	// HostQoS is the class the VM's vCPU threads get on the host
	// (Unspecified: whatever the hypervisor gives them). Backends apply it
	// where they can, QEMU first.
	HostQoS qos.Class `json:"host_qos,omitempty"`
}

// Sizing of a VM a run boots, in one place: memory and scratch disk follow
// the compression cells (the guest holds a cell's input in memory, and the
// agent lets it use at most half of the guest's memory; the output goes to
// the raw scratch disk, a region per thread); below that, a VM gets
// minVMMemoryMiB and a small disk.
const (
	minVMMemoryMiB       = 1024
	minVMDiskBytes int64 = 64 << 20
)

// VMSize is the memory and scratch disk of the VM a run of s boots: the
// spec's vm.memory and vm.disk where given, else what its compression cells
// need (see minVMMemoryMiB).
func VMSize(s Spec) (memoryMiB int, diskBytes int64) {
	memoryMiB, diskBytes = minVMMemoryMiB, minVMDiskBytes
	for _, e := range s.Matrix {
		if !catalog.IsCompression(e.Workload) {
			continue
		}
		maxThreads := slices.Max(append([]int{1}, e.Threads...))
		memoryMiB = max(memoryMiB, int((2*e.SizeBytes)>>20)+512)
		diskBytes = max(diskBytes, e.SizeBytes+e.SizeBytes/64+int64(maxThreads)*(2<<20)+(64<<20))
	}
	if s.VM.MemoryBytes != 0 {
		memoryMiB = int(s.VM.MemoryBytes >> 20)
	}
	if s.VM.DiskBytes != 0 {
		diskBytes = s.VM.DiskBytes
	}
	return memoryMiB, diskBytes
}

// MatrixEntry is one workload measured at each of its QoS classes with each
// of its thread counts, with its parameters.
type MatrixEntry struct {
	Workload string      `json:"workload"`
	QoS      []qos.Class `json:"qos"`
	Threads  []int       `json:"threads"` // processes for procs
	catalog.Params
}

// SeriesKey names what a cell of e measures at class with threads on
// target, whichever repeat (see catalog.SeriesKey).
func (e MatrixEntry) SeriesKey(target string, class qos.Class, threads int) catalog.SeriesKey {
	return catalog.SeriesKey{Target: target, Workload: e.Workload, QoS: int(class), Threads: threads, Params: catalog.ParamsTaken(e.Workload, e.Params)}
}

// seriesKeys are the series keys of e's cells without a target, classes
// outermost then thread counts, as a plan lays them out.
func (e MatrixEntry) seriesKeys() []string {
	var out []string
	for _, c := range e.QoS {
		for _, t := range e.Threads {
			out = append(out, strings.TrimSpace(e.SeriesKey("", c, t).String()))
		}
	}
	return out
}

// specError is a spec that cannot be run, with every problem found, each
// naming where it is (matrix[1].threads), the bad value and what is allowed.
type specError struct {
	Name     string
	Problems []string
}

func (e *specError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("spec %s: %s", e.Name, e.Problems[0])
	}
	return fmt.Sprintf("spec %s has %d problems:\n  %s", e.Name, len(e.Problems), strings.Join(e.Problems, "\n  "))
}

//go:embed specs/*.yaml
var defaultSpecs embed.FS

// DefaultSpecNames lists the embedded specs DefaultSpec knows.
func DefaultSpecNames() []string {
	ents, _ := defaultSpecs.ReadDir("specs")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// DefaultSpecSource returns an embedded spec's YAML, to print or copy and
// edit.
func DefaultSpecSource(name string) ([]byte, error) {
	b, err := defaultSpecs.ReadFile("specs/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("unknown built-in spec %q: allowed %s", name, strings.Join(DefaultSpecNames(), ", "))
	}
	return b, nil
}

// DefaultSpec returns an embedded spec by name (see DefaultSpecNames).
func DefaultSpec(name string) (Spec, error) {
	b, err := DefaultSpecSource(name)
	if err != nil {
		return Spec{}, err
	}
	return ParseSpec(b, name)
}

// LoadSpec reads a spec file; its name defaults to the file's base name.
func LoadSpec(path string) (Spec, error) {
	b, err := inputfile.Read("spec "+path, path, "a YAML spec")
	if err != nil {
		return Spec{}, err
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return ParseSpec(b, name)
}

// ParseSpec reads a YAML spec, fills in defaults and validates it. name is
// used in errors and as the spec's name when it sets none. Every problem is
// reported at once in a *specError: unknown keys with their path, the keys
// allowed there and a likely intended one; values that are not the right
// kind with their line; then what Validate finds.
//
// The YAML is read node by node rather than through viper's Unmarshal:
// viper (through mapstructure) silently drops keys it does not know and
// lower-cases the rest, so a misspelt "treads:" would run with one thread.
// A spec is a document, not layered settings; viper can still supply the
// path of the file (a flag, the environment, the config file).
func ParseSpec(b []byte, name string) (Spec, error) {
	fail := func(problem string) (Spec, error) {
		return Spec{}, &specError{Name: name, Problems: []string{problem}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc, more yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF) || err == nil && (len(doc.Content) == 0 || isNull(doc.Content[0])):
		return fail("empty: a spec needs at least a matrix, e.g.\n    matrix:\n      - {workload: fp, qos: [9, 33], threads: 1-4}")
	case err != nil:
		return fail("not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "))
	}
	switch err := dec.Decode(&more); {
	case err == nil:
		return fail(fmt.Sprintf("a second YAML document starts near line %d: one spec per file", more.Line))
	case !errors.Is(err, io.EOF):
		return fail("not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "))
	}
	d := &specDecoder{}
	s := d.spec(doc.Content[0])
	if len(d.problems) > 0 {
		return Spec{}, &specError{Name: name, Problems: d.report()}
	}
	if s.Name == "" {
		s.Name = name
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// Validate checks a spec's values, reporting every problem in a *specError.
// It fills in nothing: a Spec built in code must set what ParseSpec would
// default.
func (s Spec) Validate() error {
	var p []string
	bad := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }

	if err := checkName(s.Name); err != nil {
		bad("%v", err)
	}
	p = append(p, targetProblems(s.Targets)...)
	p = append(p, s.VM.problems()...)
	mp, maxSize := matrixProblems(s.Matrix)
	p = append(p, mp...)
	if s.Repeats < 1 || s.Repeats > maxRepeats {
		bad("repeats %d: allowed 1..%d", s.Repeats, maxRepeats)
	}
	if err := CheckMaxRepeats("max_repeats", s.MaxRepeats, s.Repeats); err != nil {
		bad("%v", err)
	}
	if s.Warmup < 0 || s.Warmup > maxWarmup {
		bad("warmup %d: allowed 0..%d untimed runs per cell and target", s.Warmup, maxWarmup)
	}
	if s.Order != OrderInterleaved && s.Order != OrderSequential {
		bad("order %q: allowed %s (shuffled, host and vm alternating), %s (as written)", s.Order, OrderInterleaved, OrderSequential)
	}
	if s.TelemetryMs != 0 && (s.TelemetryMs < minTelemetryMs || s.TelemetryMs > maxTelemetryMs) {
		bad("telemetry_ms %d: allowed 0 (no telemetry) or %d..%d ms between samples", s.TelemetryMs, minTelemetryMs, maxTelemetryMs)
	}
	if r := s.Verdict.Relative; r != 0 && !(r > 0 && r < 1) {
		bad("verdict.relative_margin %g: allowed a share of the host's effect above 0 and below 1, such as 0.1 (10%%)", r)
	}
	if a := s.Verdict.Absolute; a != 0 && !(a > 1 && a <= maxAbsoluteMargin) {
		bad("verdict.absolute_margin %g: allowed a ratio above 1 and at most %g, such as 1.25", a, float64(maxAbsoluteMargin))
	}
	if err := CheckCellTimeout("cell_timeout", s.CellTimeout); err != nil {
		bad("%v", err)
	}
	if !s.Contention.Valid() {
		bad("contention %d: allowed 0..%d spinner threads or %s (one per CPU)", s.Contention, contention.MaxSpinners, contention.All)
	}
	// The guest holds a compression cell's input in memory and the agent
	// lets it use at most half of the guest's memory; catch that now rather
	// than an hour into the run.
	if need := 2*maxSize + 512<<20; slices.Contains(s.Targets, TargetVM) && maxSize > 0 && s.VM.MemoryBytes != 0 && s.VM.MemoryBytes < need {
		bad("vm.memory %s is too small for compression of %s: give at least %s, or leave memory out to size it for the matrix",
			units.FormatBytes(s.VM.MemoryBytes), units.FormatBytes(maxSize), units.FormatBytes(need))
	}
	if len(p) > 0 {
		return &specError{Name: s.Name, Problems: p}
	}
	return nil
}

// targetProblems checks the targets: some, each known, each once.
func targetProblems(targets []string) []string {
	var p []string
	if len(targets) == 0 {
		p = append(p, fmt.Sprintf("targets is empty: allowed %s, %s", TargetHost, TargetVM))
	}
	seen := map[string]bool{}
	for i, t := range targets {
		switch {
		case t != TargetHost && t != TargetVM:
			p = append(p, fmt.Sprintf("targets[%d] %q: allowed %s, %s", i, t, TargetHost, TargetVM))
		case seen[t]:
			p = append(p, fmt.Sprintf("targets[%d] %q is listed twice", i, t))
		}
		seen[t] = true
	}
	return p
}

// matrixProblems checks every entry, and that no entry measures what an
// earlier one does; it also returns the largest compression input, which
// the VM's memory must hold.
func matrixProblems(matrix []MatrixEntry) (p []string, maxSize int64) {
	if len(matrix) == 0 {
		p = append(p, "matrix is empty: add at least one entry, e.g. {workload: fp, qos: [9, 33], threads: 1-4}")
	}
	firstSeen := map[string]string{}
	for i, e := range matrix {
		at := fmt.Sprintf("matrix[%d]", i)
		ep := e.problems(at)
		p = append(p, ep...)
		if len(ep) > 0 {
			continue
		}
		if catalog.IsCompression(e.Workload) {
			maxSize = max(maxSize, e.SizeBytes)
		}
		for _, k := range e.seriesKeys() {
			if prev, ok := firstSeen[k]; ok && prev != at {
				p = append(p, fmt.Sprintf("%s measures %q again, as %s does: drop it or change its values", at, k, prev))
				break
			}
			firstSeen[k] = at
		}
	}
	return p, maxSize
}

// CheckCellTimeout refuses a cell timeout outside what is allowed; 0 is no
// limit. name names the setting in the error (cell_timeout, --cell-timeout).
func CheckCellTimeout(name string, d time.Duration) error {
	if d != 0 && (d < minCellTimeout || d > maxCellTimeout) {
		return fmt.Errorf("%s %s: allowed %s..%s, or leave it out for no limit", name, d, minCellTimeout, maxCellTimeout)
	}
	return nil
}

// ParseTargets reads comma-separated targets ("host,vm"), each once, in
// the order given; name names the setting in errors.
func ParseTargets(name, s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if err := suggest.OneOf(name, t, []string{TargetHost, TargetVM}); err != nil {
			return nil, err
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func checkName(name string) error {
	ok := name != "" && len(name) <= maxNameLen
	for i, r := range name {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || r != '.' && r != '_' && r != '-') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("name %q: allowed up to %d letters, digits, '.', '_' and '-', starting with a letter or digit (it names the results directory)", name, maxNameLen)
	}
	return nil
}

func (v VMSpec) problems() []string {
	var p []string
	bad := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	if v.Backend != "" && registry.Check(v.Backend) != nil {
		bad("vm.backend %q: allowed %s, or leave it out for this machine's default", v.Backend, strings.Join(registry.Names(), ", "))
	}
	if v.CPUs < 1 || v.CPUs > maxVMCPUs {
		bad("vm.cpus %d: allowed 1..%d", v.CPUs, maxVMCPUs)
	}
	if v.MemoryBytes != 0 && (v.MemoryBytes < minVMMemory || v.MemoryBytes > maxVMMemory) {
		bad("vm.memory %s: allowed %s..%s", units.FormatBytes(v.MemoryBytes), units.FormatBytes(minVMMemory), units.FormatBytes(maxVMMemory))
	}
	if v.DiskBytes < 0 || v.DiskBytes > maxVMDisk {
		bad("vm.disk %d bytes: allowed up to %s", v.DiskBytes, units.FormatBytes(maxVMDisk))
	}
	p = append(p, registry.CheckVM(v.Backend, hv.VMConfig{Accel: v.Accel, Model: v.Model, CPUs: v.CPUs, MemoryBytes: v.MemoryBytes, DiskBytes: v.DiskBytes})...)
	if v.HostQoS != qos.Unspecified && !v.HostQoS.Valid() {
		bad("vm.host_qos %d: allowed %s", int(v.HostQoS), qos.Allowed)
	}
	return p
}

func (e MatrixEntry) problems(at string) []string {
	var p []string
	bad := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	w, err := catalog.Get(e.Workload)
	if err != nil {
		return []string{fmt.Sprintf("%s.workload: %v", at, err)}
	}
	if len(e.QoS) == 0 {
		bad("%s.qos is empty: allowed %s", at, qos.Allowed)
	}
	for i, c := range e.QoS {
		if !c.Valid() {
			bad("%s.qos[%d] %d: allowed %s", at, i, int(c), qos.Allowed)
		}
	}
	maxN, what := w.MaxCount()
	if len(e.Threads) == 0 {
		bad("%s.threads is empty: allowed counts of %s, 1..%d", at, what, maxN)
	}
	maxThreads := 0
	for i, n := range e.Threads {
		if n < 1 || n > maxN {
			bad("%s.threads[%d] %d: %s allows 1..%d %s", at, i, n, e.Workload, maxN, what)
		}
		maxThreads = max(maxThreads, n)
	}
	if kp := e.kindProblems(at, w); len(kp) > 0 {
		return append(p, kp...)
	}
	for _, k := range catalog.ParamKeys() {
		if k.TakenBy(e.Workload) && k.Check != nil {
			if problem := k.Check(w, e.Params, maxThreads); problem != "" {
				p = append(p, at+problem)
			}
		}
	}
	return p
}

// kindProblems are the parameters of e set that its workload w does not
// take, and loops given with a duration.
func (e MatrixEntry) kindProblems(at string, w catalog.Workload) []string {
	if e.Duration != 0 && e.Loops != 0 {
		return []string{fmt.Sprintf("%s: loops %d and duration %s: give one, not both", at, e.Loops, e.Duration)}
	}
	var p, other []string
	for _, k := range catalog.ParamKeys() {
		switch {
		case k.TakenBy(e.Workload) || !k.IsSet(e.Params):
		case !w.TakesLoops():
			p = append(p, fmt.Sprintf("%s.%s: %s takes size, not %s", at, k.Name, e.Workload, k.Name))
		default:
			other = append(other, k.Name)
		}
	}
	if len(other) > 0 {
		var names []string
		for _, k := range catalog.ParamKeys() {
			if !k.TakenBy(e.Workload) {
				names = append(names, k.Name)
			}
		}
		last := len(names) - 1
		p = append(p, fmt.Sprintf("%s: %s takes loops, not %s or %s", at, e.Workload, strings.Join(names[:last], ", "), names[last]))
	}
	return p
}

// Shrink returns s shrunk for a smoke run (--quick), marked Quick: every compute
// workload's loops capped at its catalog.Workload.QuickLoops, every
// fixed-duration cell at quickDuration, every compression size at
// catalog.QuickSize, an entry's thread counts cut to quickThreadCounts (the
// smallest, the largest and the one halfway, so a regression line still
// fits), and a procs entry's process counts to its smallest. Repeats and
// classes stay (a verdict needs 6 repeats).
//
// Budget: every built-in spec's --quick under 2 minutes on a 2-CPU machine
// whose VM has only TCG (the specs' comments give the times measured).
// The guest is what costs: fp 1.3e7 loops/s on one vCPU, 2.3e7 on two;
// mmul 1.8e4/s per vCPU; zstd 8 MB/s compressing, 24 MB/s decompressing;
// about 0.16 s to start each process of a procs cell (an 11 MB Go binary
// under emulation), which is why procs keeps one count; and about 0.4 s
// of orchestration per cell run (request, telemetry, the host's sampling),
// which is why thread counts are cut: it is most of subsumption's time.
func Shrink(s Spec) Spec {
	out := s
	out.Matrix = make([]MatrixEntry, len(s.Matrix))
	for i, e := range s.Matrix {
		w := catalog.Lookup(e.Workload)
		e.Threads = append([]int(nil), e.Threads...)
		switch counts := slices.Sorted(slices.Values(e.Threads)); {
		case w.Kind == catalog.KindProcs && len(counts) > quickProcCounts:
			e.Threads = counts[:quickProcCounts]
		case len(counts) > quickThreadCounts:
			e.Threads = []int{counts[0], counts[(len(counts)-1)/2], counts[len(counts)-1]}
		}
		maxThreads := slices.Max(append([]int{1}, e.Threads...))
		if limit := w.QuickLoops; w.TakesLoops() && e.Loops > limit {
			e.Loops = limit
			if w.LoopsInTotal {
				e.Loops = max(e.Loops, uint64(maxThreads))
			}
		}
		if e.Duration > quickDuration {
			e.Duration = quickDuration
		}
		if e.SizeBytes > catalog.QuickSize {
			e.SizeBytes = max(catalog.QuickSize, int64(maxThreads))
		}
		e.QoS = append([]qos.Class(nil), e.QoS...)
		out.Matrix[i] = e
	}
	out.Targets = append([]string(nil), s.Targets...)
	out.Quick = true
	return out
}

// MaxRepeatsLimit is the most repeats, and the highest cap, a spec may ask.
const MaxRepeatsLimit = maxRepeats

// WithRepeats is s with n repeats of each cell. A max_repeats at its
// default, DefaultMaxRepeatsFactor times the repeats, follows them: a spec
// that leaves max_repeats out keeps its looks' room. (A recorded spec
// holds the cap as applied, not whether it was given, so a cap written
// out as exactly that multiple follows too.) Any other cap stands, for
// Validate or CheckMaxRepeats to refuse when below n.
func (s Spec) WithRepeats(n int) Spec {
	if s.MaxRepeats == DefaultMaxRepeatsFactor*s.Repeats {
		s.MaxRepeats = DefaultMaxRepeatsFactor * n
	}
	s.Repeats = n
	return s
}

// CheckMaxRepeats checks a cap of repeats per cell (the spec's
// max_repeats, or the flag named name) against the spec's repeats: 0 (no
// repeats added) or repeats..1000.
func CheckMaxRepeats(name string, n, repeats int) error {
	if n == 0 || (n >= repeats && n <= maxRepeats) {
		return nil
	}
	return fmt.Errorf("%s %d: allowed 0 (add no repeats) or %d..%d (at least the spec's repeats, %d)", name, n, max(repeats, 1), maxRepeats, repeats)
}

// quickDuration caps fixed-duration cells in a Quick run.
const quickDuration = 250 * time.Millisecond

// quickThreadCounts is how many thread counts an entry keeps in a Quick
// run: three, the fewest a regression line needs. quickProcCounts is how
// many process counts a procs entry keeps: its smallest, since every
// process costs its start (batches: 10 processes on 2 vCPUs still finish
// in batches).
const (
	quickThreadCounts = 3
	quickProcCounts   = 1
)

// parseCounts reads thread or process counts ("4", "1-4", "1,2,4", "10-70/10").
func parseCounts(s string, maxN int) ([]int, error) { return units.ParseCounts("counts", s, maxN) }
