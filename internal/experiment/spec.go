package experiment

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/inputfile"
	"github.com/qoslab/qoslab/internal/suggest"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/units"

	"go.yaml.in/yaml/v3"

	"github.com/qoslab/qoslab/internal/qos"
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
	// DefaultWarmup is 0 because no workload carries state from one run to
	// the next that a warm-up would settle: fp and int touch registers only,
	// and the compression workloads generate their input before the clock
	// starts. A spec asks for warm-ups when first-run effects (a VM's sparse
	// scratch disk allocating blocks on the host, say) should be absorbed.
	DefaultWarmup = 0
	// DefaultVMCPUs is the four-core VM of [game] (docs/references.md).
	DefaultVMCPUs = 4
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
	// Quick is set by Quick: loops and sizes were shrunk for a smoke run.
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

// MatrixEntry is one workload measured at each of its QoS classes with each
// of its thread counts.
type MatrixEntry struct {
	Workload string      `json:"workload"`
	QoS      []qos.Class `json:"qos"`
	Threads  []int       `json:"threads"` // processes for procs
	// Loops is per thread (per process for procs; in total for pi); only
	// the compute workloads take it.
	Loops uint64 `json:"loops,omitempty"`
	// Duration, instead of Loops (fp, int, mmul): every thread runs its
	// kernel until the cell's clock reaches it, and the work done is the
	// result, so a starved thread cannot make a cell last minutes and a
	// fast one cannot end it before the scheduler has placed anything.
	Duration time.Duration `json:"duration_ns,omitempty"`

	// Only compress and decompress take these.
	SizeBytes int64   `json:"size_bytes,omitempty"` // generated input, split over the threads
	Ratio     float64 `json:"ratio,omitempty"`      // compressibility under zstd
	Codec     string  `json:"codec,omitempty"`
	Level     int     `json:"level,omitempty"` // 0: the codec's default
	Sink      string  `json:"sink,omitempty"`  // file, block, null
	SinkPath  string  `json:"sink_path,omitempty"`
}

// SpecError is a spec that cannot be run, with every problem found, each
// naming where it is (matrix[1].threads), the bad value and what is allowed.
type SpecError struct {
	Name     string
	Problems []string
}

func (e *SpecError) Error() string {
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
// reported at once in a *SpecError: unknown keys with their path, the keys
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
		return Spec{}, &SpecError{Name: name, Problems: []string{problem}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc, more yaml.Node
	switch err := dec.Decode(&doc); {
	case err == io.EOF || err == nil && (len(doc.Content) == 0 || isNull(doc.Content[0])):
		return fail("empty: a spec needs at least a matrix, e.g.\n    matrix:\n      - {workload: fp, qos: [9, 33], threads: 1-4}")
	case err != nil:
		return fail("not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "))
	}
	switch err := dec.Decode(&more); {
	case err == nil:
		return fail(fmt.Sprintf("a second YAML document starts near line %d: one spec per file", more.Line))
	case err != io.EOF:
		return fail("not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "))
	}
	d := &specDecoder{}
	s := d.spec(doc.Content[0])
	if len(d.problems) > 0 {
		return Spec{}, &SpecError{Name: name, Problems: d.report()}
	}
	if s.Name == "" {
		s.Name = name
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// Validate checks a spec's values, reporting every problem in a *SpecError.
// It fills in nothing: a Spec built in code must set what ParseSpec would
// default.
func (s Spec) Validate() error {
	var p []string
	bad := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }

	if err := checkName(s.Name); err != nil {
		bad("%v", err)
	}
	if len(s.Targets) == 0 {
		bad("targets is empty: allowed %s, %s", TargetHost, TargetVM)
	}
	seenTarget := map[string]bool{}
	for i, t := range s.Targets {
		switch {
		case t != TargetHost && t != TargetVM:
			bad("targets[%d] %q: allowed %s, %s", i, t, TargetHost, TargetVM)
		case seenTarget[t]:
			bad("targets[%d] %q is listed twice", i, t)
		}
		seenTarget[t] = true
	}
	p = append(p, s.VM.problems()...)

	if len(s.Matrix) == 0 {
		bad("matrix is empty: add at least one entry, e.g. {workload: fp, qos: [9, 33], threads: 1-4}")
	}
	firstSeen := map[string]string{}
	var maxSize int64
	for i, e := range s.Matrix {
		at := fmt.Sprintf("matrix[%d]", i)
		ep := e.problems(at)
		p = append(p, ep...)
		if len(ep) > 0 {
			continue
		}
		if catalog.IsCompression(e.Workload) {
			maxSize = max(maxSize, e.SizeBytes)
		}
		for _, c := range e.series(i) {
			k := c.SeriesKey()
			if prev, ok := firstSeen[k]; ok && prev != at {
				bad("%s measures %q again, as %s does: drop it or change its values", at, strings.TrimSpace(k), prev)
				break
			}
			firstSeen[k] = at
		}
	}
	if s.Repeats < 1 || s.Repeats > maxRepeats {
		bad("repeats %d: allowed 1..%d", s.Repeats, maxRepeats)
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
	if need := 2*maxSize + 512<<20; seenTarget[TargetVM] && maxSize > 0 && s.VM.MemoryBytes != 0 && s.VM.MemoryBytes < need {
		bad("vm.memory %s is too small for compression of %s: give at least %s, or leave memory out to size it for the matrix",
			units.FormatBytes(s.VM.MemoryBytes), units.FormatBytes(maxSize), units.FormatBytes(need))
	}
	if len(p) > 0 {
		return &SpecError{Name: s.Name, Problems: p}
	}
	return nil
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
	if v.Backend != "" && v.Backend != "qemu" && v.Backend != "vz" {
		bad("vm.backend %q: allowed qemu, vz, or leave it out for this machine's default", v.Backend)
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
	switch v.Accel {
	case "", "kvm", "tcg", "hvf":
		if v.Accel != "" && v.Backend == "vz" {
			bad("vm.accel %q: only the qemu backend takes an accelerator", v.Accel)
		}
	default:
		bad("vm.accel %q: allowed kvm, tcg, hvf, or leave it out to use KVM/hvf when they work", v.Accel)
	}
	switch v.Model {
	case "", hv.ModelDefault:
	case hv.ModelVZ:
		if v.Backend == "vz" {
			bad("vm.model %q with vm.backend vz: the vz model is the qemu backend's emulation of Virtualization.framework's devices; with vm.backend vz the framework itself boots the guest, so leave vm.model out (or use vm.backend qemu)", v.Model)
		}
	default:
		bad("vm.model %q: allowed %s, or leave it out for the backend's own", v.Model, strings.Join(hv.Models(), ", "))
	}
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
	if e.Duration != 0 {
		switch {
		case e.Loops != 0:
			bad("%s: loops %d and duration %s: give one, not both", at, e.Loops, e.Duration)
		default:
			if err := catalog.CheckDuration(w, e.Duration); err != nil {
				bad("%s.duration: %v", at, err)
			}
		}
		return p
	}
	if w.TakesLoops() {
		switch {
		case e.SizeBytes != 0 || e.Ratio != 0 || e.Codec != "" || e.Level != 0 || e.Sink != "" || e.SinkPath != "":
			bad("%s: %s takes loops, not size, ratio, codec, level, sink or sink_path", at, e.Workload)
		case w.LoopsInTotal && (e.Loops < uint64(maxThreads) || e.Loops > catalog.MaxLoops):
			bad("%s.loops %d: pi's loops are iterations in total, allowed %d (one per thread) .. %d", at, e.Loops, maxThreads, uint64(catalog.MaxLoops))
		case e.Loops < 1 || e.Loops > catalog.MaxLoops:
			bad("%s.loops %d: allowed 1..%d per thread", at, e.Loops, uint64(catalog.MaxLoops))
		}
		return p
	}
	if e.Loops != 0 {
		bad("%s.loops: %s takes size, not loops", at, e.Workload)
	}
	if e.SizeBytes < int64(max(maxThreads, 1)) || e.SizeBytes > catalog.MaxDataBytes {
		bad("%s.size %d bytes: allowed %d (one per thread) .. %s", at, e.SizeBytes, max(maxThreads, 1), units.FormatBytes(catalog.MaxDataBytes))
	}
	if err := catalog.CheckRatio(e.Ratio); err != nil {
		bad("%s.ratio: %v", at, err)
	}
	// CheckLevel, not CheckCodec: a spec written here may name lzfse for a
	// Mac host; the agent that lacks a codec refuses the cell itself.
	if err := catalog.CheckLevel(e.Codec, e.Level); err != nil {
		bad("%s: %v", at, err)
	}
	switch e.Sink {
	case catalog.SinkFile, catalog.SinkNull:
	case catalog.SinkBlock:
		if e.SinkPath == "" {
			bad("%s.sink block needs sink_path: a raw block device whose contents may be overwritten", at)
		}
	default:
		bad("%s.sink %q: allowed %s", at, e.Sink, strings.Join(catalog.Sinks(), ", "))
	}
	return p
}

// Quick returns s shrunk for a smoke run, marked Quick: every compute
// workload's loops capped at its catalog.Workload.QuickLoops, every
// fixed-duration cell at QuickDuration, every compression size at
// catalog.QuickSize, an entry's thread counts cut to QuickThreadCounts (the
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
func Quick(s Spec) Spec {
	out := s
	out.Matrix = make([]MatrixEntry, len(s.Matrix))
	for i, e := range s.Matrix {
		w := catalog.Lookup(e.Workload)
		e.Threads = append([]int(nil), e.Threads...)
		switch counts := slices.Sorted(slices.Values(e.Threads)); {
		case w.Kind == catalog.KindProcs && len(counts) > QuickProcCounts:
			e.Threads = counts[:QuickProcCounts]
		case len(counts) > QuickThreadCounts:
			e.Threads = []int{counts[0], counts[(len(counts)-1)/2], counts[len(counts)-1]}
		}
		maxThreads := slices.Max(append([]int{1}, e.Threads...))
		if limit := w.QuickLoops; w.TakesLoops() && e.Loops > limit {
			e.Loops = limit
			if w.LoopsInTotal {
				e.Loops = max(e.Loops, uint64(maxThreads))
			}
		}
		if e.Duration > QuickDuration {
			e.Duration = QuickDuration
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

// QuickDuration caps fixed-duration cells in a Quick run.
const QuickDuration = 250 * time.Millisecond

// QuickThreadCounts is how many thread counts an entry keeps in a Quick
// run: three, the fewest a regression line needs. QuickProcCounts is how
// many process counts a procs entry keeps: its smallest, since every
// process costs its start (batches: 10 processes on 2 vCPUs still finish
// in batches).
const (
	QuickThreadCounts = 3
	QuickProcCounts   = 1
)

// ParseCounts reads thread or process counts ("4", "1-4", "1,2,4", "10-70/10").
func ParseCounts(s string, maxN int) ([]int, error) { return units.ParseCounts("counts", s, maxN) }

// specDecoder turns YAML nodes into a Spec, collecting every problem with
// its path and line instead of stopping at the first.
type specDecoder struct {
	problems []decodeProblem
}

type decodeProblem struct {
	line int
	msg  string
}

func (d *specDecoder) bad(path string, n *yaml.Node, format string, a ...any) {
	d.problems = append(d.problems, decodeProblem{n.Line, fmt.Sprintf("%s (line %d): %s", path, n.Line, fmt.Sprintf(format, a...))})
}

// report lists the problems in the order of the lines they are on.
func (d *specDecoder) report() []string {
	sort.SliceStable(d.problems, func(i, j int) bool { return d.problems[i].line < d.problems[j].line })
	out := make([]string, len(d.problems))
	for i, p := range d.problems {
		out[i] = p.msg
	}
	return out
}

// field decodes the value of one allowed key of a mapping.
type field struct {
	key    string
	decode func(path string, v *yaml.Node)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// mapping decodes n with fields, reporting keys not among them, and returns
// the keys given, as their nodes (a null value counts as not given, so
// defaults apply).
// Merge keys ("<<: *base") contribute keys that the mapping's own override.
func (d *specDecoder) mapping(path string, n *yaml.Node, fields []field) map[string]*yaml.Node {
	n = deref(n)
	given := map[string]*yaml.Node{}
	where := path
	if where == "" {
		where = "the spec"
	}
	if n.Kind != yaml.MappingNode {
		d.bad(where, n, "want a mapping of keys (%s), got %s", keyList(fields), kindName(n))
		return given
	}
	type pair struct{ k, v *yaml.Node }
	var own, merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.ShortTag() == "!!merge" {
			v = deref(v)
			bases := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				bases = v.Content
			}
			for _, b := range bases {
				b = deref(b)
				if b.Kind != yaml.MappingNode {
					d.bad(where, k, "a merge key (<<) takes a mapping or a list of them, got %s", kindName(b))
					continue
				}
				for j := 0; j+1 < len(b.Content); j += 2 {
					merged = append(merged, pair{b.Content[j], b.Content[j+1]})
				}
			}
			continue
		}
		own = append(own, pair{k, v})
	}
	// yaml.v3 checks for repeated keys only when it decodes into Go values,
	// not into nodes; a second "matrix:" must not silently add to the first.
	first := map[string]*yaml.Node{}
	var pairs []pair
	for _, p := range own {
		if f, dup := first[p.k.Value]; dup {
			d.bad(join(path, p.k.Value), p.k, "given twice (first on line %d)", f.Line)
			continue
		}
		first[p.k.Value] = p.k
		pairs = append(pairs, p)
	}
	// A mapping's own keys override merged ones, and an earlier merged
	// mapping overrides a later one, as YAML's merge key defines.
	for _, p := range merged {
		if first[p.k.Value] == nil {
			first[p.k.Value] = p.k
			pairs = append(pairs, p)
		}
	}
	for _, p := range pairs {
		k, v := p.k, deref(p.v)
		f, ok := findField(fields, k.Value)
		if !ok {
			msg := fmt.Sprintf("unknown key: allowed %s", keyList(fields))
			if guess := closestKey(k.Value, fields); guess != "" {
				msg += fmt.Sprintf("; did you mean %s?", guess)
			}
			d.bad(join(path, k.Value), k, "%s", msg)
			continue
		}
		if isNull(v) {
			continue
		}
		given[k.Value] = k
		f.decode(join(path, k.Value), v)
	}
	return given
}

func findField(fields []field, key string) (field, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

func keyList(fields []field) string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return strings.Join(keys, ", ")
}

// closestKey suggests the allowed key a misspelt one most likely meant.
func closestKey(key string, fields []field) string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return suggest.Closest(key, keys)
}

func (d *specDecoder) scalar(path string, n *yaml.Node, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.bad(path, n, "want %s, got %s", want, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (d *specDecoder) str(dst *string) func(string, *yaml.Node) {
	return func(path string, n *yaml.Node) {
		if v, ok := d.scalar(path, n, "a string"); ok {
			*dst = v
		}
	}
}

func (d *specDecoder) integer(dst *int) func(string, *yaml.Node) {
	return func(path string, n *yaml.Node) {
		v, ok := d.scalar(path, n, "a whole number")
		if !ok {
			return
		}
		i, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
		if err != nil {
			d.bad(path, n, "%q is not a whole number", v)
			return
		}
		*dst = i
	}
}

// list reads a list given as YAML ([a, b] or one item per line) or as one
// comma-separated string ("9,33"), returning its items trimmed.
func (d *specDecoder) list(path string, n *yaml.Node) ([]string, bool) {
	var raw []string
	switch n.Kind {
	case yaml.ScalarNode:
		raw = strings.Split(n.Value, ",")
	case yaml.SequenceNode:
		for i, item := range n.Content {
			item = deref(item)
			if item.Kind != yaml.ScalarNode {
				d.bad(fmt.Sprintf("%s[%d]", path, i), item, "want a single value, got %s", kindName(item))
				return nil, false
			}
			raw = append(raw, item.Value)
		}
	default:
		d.bad(path, n, "want a list, got %s", kindName(n))
		return nil, false
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		r = strings.TrimSpace(r)
		if r == "" {
			d.bad(path, n, "has an empty item")
			return nil, false
		}
		out = append(out, r)
	}
	return out, true
}

func (d *specDecoder) spec(n *yaml.Node) Spec {
	s := Spec{
		Targets: []string{TargetHost, TargetVM},
		VM:      VMSpec{CPUs: DefaultVMCPUs},
		Repeats: DefaultRepeats,
		Warmup:  DefaultWarmup,
		Order:   OrderInterleaved,
		// The powermetrics interval of [allocation] (docs/references.md).
		TelemetryMs: telemetry.DefaultIntervalMs,
		DataSeed:    DefaultDataSeed,
		Verdict:     analysis.DefaultMargins(),
	}
	d.mapping("", n, []field{
		{"name", d.str(&s.Name)},
		{"description", d.str(&s.Description)},
		{"targets", func(path string, v *yaml.Node) {
			if items, ok := d.list(path, v); ok {
				s.Targets = dedupe(items)
			}
		}},
		{"vm", func(path string, v *yaml.Node) { s.VM = d.vm(path, v) }},
		{"matrix", func(path string, v *yaml.Node) {
			if v.Kind != yaml.SequenceNode {
				d.bad(path, v, "want a list of entries such as {workload: fp, qos: [9, 33], threads: 1-4}, got %s", kindName(v))
				return
			}
			for i, e := range v.Content {
				s.Matrix = append(s.Matrix, d.entry(fmt.Sprintf("%s[%d]", path, i), deref(e)))
			}
		}},
		{"repeats", d.integer(&s.Repeats)},
		{"warmup", d.integer(&s.Warmup)},
		{"order", d.str(&s.Order)},
		{"seed", func(path string, v *yaml.Node) {
			if t, ok := d.scalar(path, v, "a whole number"); ok {
				seed, err := strconv.ParseUint(strings.ReplaceAll(t, "_", ""), 10, 64)
				if err != nil {
					d.bad(path, v, "%q: allowed a whole number 0..%d, or leave it out to pick one", t, uint64(math.MaxUint64))
					return
				}
				s.Seed = &seed
			}
		}},
		{"contention", func(path string, v *yaml.Node) {
			if t, ok := d.scalar(path, v, "a whole number or all"); ok {
				c, err := contention.ParseSpinnerCount("", t)
				if err != nil {
					d.bad(path, v, "%v", err)
					return
				}
				s.Contention = c
			}
		}},
		{"telemetry_ms", d.integer(&s.TelemetryMs)},
		{"data_seed", func(path string, v *yaml.Node) {
			if t, ok := d.scalar(path, v, "a whole number"); ok {
				seed, err := strconv.ParseUint(strings.ReplaceAll(t, "_", ""), 10, 64)
				if err != nil {
					d.bad(path, v, "%q: allowed a whole number 0..%d", t, uint64(math.MaxUint64))
					return
				}
				s.DataSeed = seed
			}
		}},
		{"verdict", func(path string, v *yaml.Node) {
			d.mapping(path, v, []field{
				{"relative_margin", d.number(&s.Verdict.Relative)},
				{"absolute_margin", d.number(&s.Verdict.Absolute)},
			})
		}},
		{"cell_timeout", func(path string, v *yaml.Node) {
			if t, ok := d.scalar(path, v, "a duration such as 10m"); ok {
				dur, err := time.ParseDuration(t)
				if err != nil {
					d.bad(path, v, "%q is not a duration: write it as 90s, 10m or 1h (allowed %s..%s)", t, minCellTimeout, maxCellTimeout)
					return
				}
				s.CellTimeout = dur
			}
		}},
	})
	return s
}

// number decodes a decimal number ("0.1", "1.25").
func (d *specDecoder) number(dst *float64) func(string, *yaml.Node) {
	return func(path string, n *yaml.Node) {
		v, ok := d.scalar(path, n, "a number")
		if !ok {
			return
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			d.bad(path, n, "%q is not a number", v)
			return
		}
		*dst = x
	}
}

func (d *specDecoder) vm(path string, n *yaml.Node) VMSpec {
	v := VMSpec{CPUs: DefaultVMCPUs}
	size := func(dst *int64, maxN int64) func(string, *yaml.Node) {
		return func(path string, n *yaml.Node) {
			t, ok := d.scalar(path, n, "a size such as 4GiB")
			if !ok {
				return
			}
			b, err := units.ParseSize("", t, maxN)
			if err != nil {
				d.bad(path, n, "%v", err)
				return
			}
			*dst = b
		}
	}
	d.mapping(path, n, []field{
		{"backend", d.str(&v.Backend)},
		{"image", d.str(&v.Image)},
		{"cpus", d.integer(&v.CPUs)},
		{"memory", size(&v.MemoryBytes, maxVMMemory)},
		{"disk", size(&v.DiskBytes, maxVMDisk)},
		{"accel", d.str(&v.Accel)},
		{"model", d.str(&v.Model)},
		{"host_qos", func(path string, n *yaml.Node) {
			t, ok := d.scalar(path, n, "a QoS class")
			if !ok {
				return
			}
			c, err := qos.Parse(t)
			if err != nil {
				d.bad(path, n, "%v", err)
				return
			}
			v.HostQoS = c
		}},
	})
	return v
}

// entryKeys are the keys of a matrix entry that workload w takes, and those
// only the other kind of workload takes.
func entryKeys(w string) (takes, other []string) {
	common, compute := []string{"workload", "qos", "threads"}, []string{"loops", "duration"}
	compression := []string{"size", "ratio", "codec", "level", "sink", "sink_path"}
	if catalog.IsCompression(w) {
		return append(common, compression...), compute
	}
	if !catalog.Lookup(w).TakesDuration() {
		// pi splits a total, procs runs processes: both need fixed work.
		return append(common, "loops"), append(compression, "duration")
	}
	return append(common, compute...), compression
}

func (d *specDecoder) entry(path string, n *yaml.Node) MatrixEntry {
	var e MatrixEntry
	var threads []int
	known := false // the workload is given and valid
	before := len(d.problems)
	given := d.mapping(path, n, []field{
		{"workload", func(p string, v *yaml.Node) {
			if v.Kind == yaml.SequenceNode {
				d.bad(p, v, "one workload per entry: write an entry for each")
				return
			}
			w, ok := d.scalar(p, v, "a workload name")
			if !ok {
				return
			}
			if _, err := catalog.Get(w); err != nil {
				d.bad(p, v, "%v", err)
				return
			}
			e.Workload, known = w, true
		}},
		{"qos", func(p string, v *yaml.Node) {
			items, ok := d.list(p, v)
			if !ok {
				return
			}
			for _, it := range items {
				c, err := qos.Parse(it)
				if err != nil {
					d.bad(p, v, "%v", err)
					return
				}
				if !containsClass(e.QoS, c) {
					e.QoS = append(e.QoS, c)
				}
			}
		}},
		{"threads", func(p string, v *yaml.Node) {
			items, ok := d.list(p, v)
			if !ok {
				return
			}
			counts, err := ParseCounts(strings.Join(items, ","), catalog.MaxThreads)
			if err != nil {
				d.bad(p, v, "%v", err)
				return
			}
			threads = counts
		}},
		{"loops", func(p string, v *yaml.Node) {
			if t, ok := d.scalar(p, v, "a count such as 2e8"); ok {
				n, err := units.ParseCount("", t, catalog.MaxLoops)
				if err != nil {
					d.bad(p, v, "%v", err)
					return
				}
				e.Loops = n
			}
		}},
		{"duration", func(p string, v *yaml.Node) {
			if t, ok := d.scalar(p, v, "a duration such as 1s"); ok {
				dur, err := time.ParseDuration(t)
				if err != nil {
					d.bad(p, v, "%q is not a duration: write it as 1s, 500ms or 2m (allowed %s..%s)", t, catalog.MinDuration, catalog.MaxDuration)
					return
				}
				if dur < catalog.MinDuration || dur > catalog.MaxDuration {
					// Said here: a duration of 0 would otherwise read as
					// none given, and be reported as loops 0.
					d.bad(p, v, "duration %s: allowed %s..%s", dur, catalog.MinDuration, catalog.MaxDuration)
					return
				}
				e.Duration = dur
			}
		}},
		{"size", func(p string, v *yaml.Node) {
			if t, ok := d.scalar(p, v, "a size such as 1GiB"); ok {
				b, err := units.ParseSize("", t, catalog.MaxDataBytes)
				if err != nil {
					d.bad(p, v, "%v", err)
					return
				}
				e.SizeBytes = b
			}
		}},
		{"ratio", func(p string, v *yaml.Node) {
			if t, ok := d.scalar(p, v, "a number"); ok {
				r, err := strconv.ParseFloat(t, 64)
				if err != nil {
					d.bad(p, v, "%q is not a number: allowed %g (random) .. %g", t, catalog.MinRatio, catalog.MaxRatio)
					return
				}
				e.Ratio = r
			}
		}},
		{"codec", d.str(&e.Codec)},
		{"level", d.integer(&e.Level)},
		{"sink", d.str(&e.Sink)},
		{"sink_path", d.str(&e.SinkPath)},
	})
	if given["workload"] == nil {
		d.bad(path, n, "no workload: allowed %s", strings.Join(catalog.Names(), ", "))
		return e
	}
	if !known {
		return e // what is wrong with it is reported
	}
	// Keys another kind of workload takes are a mistake worth naming rather
	// than ignoring: "size" on fp measures nothing the writer meant.
	takes, wrong := entryKeys(e.Workload)
	for _, k := range wrong {
		if kn := given[k]; kn != nil {
			d.bad(join(path, k), kn, "%s does not take %s: its keys are %s", e.Workload, k, strings.Join(takes, ", "))
		}
	}
	if len(d.problems) > before {
		return e
	}
	if given["qos"] == nil {
		e.QoS = []qos.Class{qos.Background, qos.UserInteractive}
	}
	e.Threads = threads
	if given["threads"] == nil {
		e.Threads = []int{1}
	}
	if catalog.IsCompression(e.Workload) {
		if given["size"] == nil {
			e.SizeBytes = catalog.DefaultSize
		}
		if given["ratio"] == nil {
			e.Ratio = catalog.DefaultRatio
		}
		if given["codec"] == nil {
			e.Codec = catalog.DefaultCodec
		}
		if given["sink"] == nil {
			e.Sink = catalog.DefaultSink
		}
	} else if given["loops"] == nil && given["duration"] == nil {
		e.Loops = catalog.Lookup(e.Workload).DefaultLoops
	}
	return e
}

func containsClass(cs []qos.Class, c qos.Class) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func dedupe(items []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}
