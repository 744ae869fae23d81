package spec

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/suggest"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

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
		VM:      VMSpec{CPUs: defaultVMCPUs},
		Repeats: DefaultRepeats,
		Warmup:  DefaultWarmup,
		Order:   OrderInterleaved,
		// The powermetrics interval of [allocation] (docs/references.md).
		TelemetryMs: telemetry.DefaultIntervalMs,
		DataSeed:    DefaultDataSeed,
		Verdict:     analysis.DefaultMargins(),
	}
	maxGiven := false
	d.mapping("", n, []field{
		{"name", d.str(&s.Name)},
		{"description", d.str(&s.Description)},
		{"targets", func(path string, v *yaml.Node) {
			if items, ok := d.list(path, v); ok {
				s.Targets = dedupe(items)
			}
		}},
		{"vm", func(path string, v *yaml.Node) { s.VM = d.vm(path, v) }},
		{"matrix", d.matrix(&s.Matrix)},
		{"repeats", d.integer(&s.Repeats)},
		{"max_repeats", func(path string, v *yaml.Node) {
			d.integer(&s.MaxRepeats)(path, v)
			maxGiven = true
		}},
		{"warmup", d.integer(&s.Warmup)},
		{"order", d.str(&s.Order)},
		{"seed", d.seed(func(seed uint64) { s.Seed = &seed }, ", or leave it out to pick one")},
		{"contention", d.contention(&s.Contention)},
		{"telemetry_ms", d.integer(&s.TelemetryMs)},
		{"data_seed", d.seed(func(seed uint64) { s.DataSeed = seed }, "")},
		{"verdict", func(path string, v *yaml.Node) {
			d.mapping(path, v, []field{
				{"relative_margin", d.number(&s.Verdict.Relative)},
				{"absolute_margin", d.number(&s.Verdict.Absolute)},
			})
		}},
		{"cell_timeout", d.cellTimeout(&s.CellTimeout)},
	})
	if !maxGiven {
		s.MaxRepeats = DefaultMaxRepeatsFactor * s.Repeats
	}
	return s
}

// matrix decodes the list of matrix entries.
func (d *specDecoder) matrix(dst *[]MatrixEntry) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if v.Kind != yaml.SequenceNode {
			d.bad(path, v, "want a list of entries such as {workload: fp, qos: [9, 33], threads: 1-4}, got %s", kindName(v))
			return
		}
		for i, e := range v.Content {
			*dst = append(*dst, d.entry(fmt.Sprintf("%s[%d]", path, i), deref(e)))
		}
	}
}

// seed decodes a whole number 0..2^64-1 and gives it to set; hint ends
// the error's list of what is allowed.
func (d *specDecoder) seed(set func(uint64), hint string) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		t, ok := d.scalar(path, v, "a whole number")
		if !ok {
			return
		}
		seed, err := strconv.ParseUint(strings.ReplaceAll(t, "_", ""), 10, 64)
		if err != nil {
			d.bad(path, v, "%q: allowed a whole number 0..%d%s", t, uint64(math.MaxUint64), hint)
			return
		}
		set(seed)
	}
}

// contention decodes a spinner count: a number or all.
func (d *specDecoder) contention(dst *contention.SpinnerCount) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		t, ok := d.scalar(path, v, "a whole number or all")
		if !ok {
			return
		}
		c, err := contention.ParseSpinnerCount("", t)
		if err != nil {
			d.bad(path, v, "%v", err)
			return
		}
		*dst = c
	}
}

// cellTimeout decodes a duration such as 10m; its range is Validate's.
func (d *specDecoder) cellTimeout(dst *time.Duration) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		t, ok := d.scalar(path, v, "a duration such as 10m")
		if !ok {
			return
		}
		dur, err := time.ParseDuration(t)
		if err != nil {
			d.bad(path, v, "%q is not a duration: write it as 90s, 10m or 1h (allowed %s..%s)", t, minCellTimeout, maxCellTimeout)
			return
		}
		*dst = dur
	}
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

// size decodes a size with units ("4GiB") up to maxN bytes; want names
// what is wanted when the value is not a scalar.
func (d *specDecoder) size(dst *int64, maxN int64, want string) func(string, *yaml.Node) {
	return func(path string, n *yaml.Node) {
		t, ok := d.scalar(path, n, want)
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

func (d *specDecoder) vm(path string, n *yaml.Node) VMSpec {
	v := VMSpec{CPUs: defaultVMCPUs}
	d.mapping(path, n, []field{
		{"backend", d.str(&v.Backend)},
		{"image", d.str(&v.Image)},
		{"cpus", d.integer(&v.CPUs)},
		{"memory", d.size(&v.MemoryBytes, maxVMMemory, "a size such as 4GiB")},
		{"disk", d.size(&v.DiskBytes, maxVMDisk, "a size such as 4GiB")},
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
	common := []string{"workload", "qos", "threads"}
	var compute, compression []string
	for _, k := range catalog.ParamKeys() {
		if k.Compression {
			compression = append(compression, k.Name)
		} else {
			compute = append(compute, k.Name)
		}
	}
	if catalog.IsCompression(w) {
		return append(common, compression...), compute
	}
	if !catalog.Lookup(w).TakesDuration() {
		// pi splits a total, procs runs processes: both need fixed work.
		return append(common, slices.DeleteFunc(compute, func(k string) bool { return k == "duration" })...), append(compression, "duration")
	}
	return append(common, compute...), compression
}

func (d *specDecoder) entry(path string, n *yaml.Node) MatrixEntry {
	var e MatrixEntry
	var threads []int
	known := false // the workload is given and valid
	before := len(d.problems)
	fields := []field{
		{"workload", d.workload(&e.Workload, &known)},
		{"qos", d.classes(&e.QoS)},
		{"threads", d.counts(&threads)},
	}
	for _, k := range catalog.ParamKeys() {
		fields = append(fields, field{k.Name, d.param(k.Name, k.Field(&e.Params))})
	}
	given := d.mapping(path, n, fields)
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
	e.Threads = threads
	entryDefaults(&e, given)
	return e
}

// entryDefaults fills in what a valid entry left out (given holds the
// keys it has): both ends of the QoS range, one thread, and the defaults
// of the parameters its workload takes (catalog.ParamKey.Fill).
func entryDefaults(e *MatrixEntry, given map[string]*yaml.Node) {
	if given["qos"] == nil {
		e.QoS = []qos.Class{qos.Background, qos.UserInteractive}
	}
	if given["threads"] == nil {
		e.Threads = []int{1}
	}
	w := catalog.Lookup(e.Workload)
	for _, k := range catalog.ParamKeys() {
		if k.TakenBy(e.Workload) && k.Fill != nil && given[k.Name] == nil {
			k.Fill(w, &e.Params)
		}
	}
}

// workload decodes one workload's name; known is set when it is one.
func (d *specDecoder) workload(dst *string, known *bool) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
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
		*dst, *known = w, true
	}
}

// classes decodes a list of QoS classes, each once, in the order given.
func (d *specDecoder) classes(dst *[]qos.Class) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
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
			if !containsClass(*dst, c) {
				*dst = append(*dst, c)
			}
		}
	}
}

// counts decodes thread or process counts (see parseCounts).
func (d *specDecoder) counts(dst *[]int) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		items, ok := d.list(p, v)
		if !ok {
			return
		}
		counts, err := parseCounts(strings.Join(items, ","), catalog.MaxThreads)
		if err != nil {
			d.bad(p, v, "%v", err)
			return
		}
		*dst = counts
	}
}

// param decodes the parameter name into dst, its field of a matrix entry's
// catalog.Params, by the field's type.
func (d *specDecoder) param(name string, dst any) func(string, *yaml.Node) {
	switch dst := dst.(type) {
	case *uint64:
		return d.loops(dst)
	case *time.Duration:
		return d.duration(dst)
	case *int64:
		return d.size(dst, catalog.MaxDataBytes, "a size such as 1GiB")
	case *float64:
		return d.ratio(dst)
	case *int:
		return d.integer(dst)
	case *string:
		return d.str(dst)
	}
	// catalog.ParamKeys gave a field of a type no spec can hold: a bug
	// TestEveryParamKeyDecodes finds.
	panic(fmt.Sprintf("spec: parameter %s is a %T, which a spec cannot hold", name, dst))
}

// loops decodes a count of loops ("2e8", "200_000_000").
func (d *specDecoder) loops(dst *uint64) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		t, ok := d.scalar(p, v, "a count such as 2e8")
		if !ok {
			return
		}
		n, err := units.ParseCount("", t, catalog.MaxLoops)
		if err != nil {
			d.bad(p, v, "%v", err)
			return
		}
		*dst = n
	}
}

// duration decodes a fixed-duration cell's duration, within the catalog's
// range.
func (d *specDecoder) duration(dst *time.Duration) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		t, ok := d.scalar(p, v, "a duration such as 1s")
		if !ok {
			return
		}
		dur, err := time.ParseDuration(t)
		if err != nil {
			d.bad(p, v, "%q is not a duration: write it as 1s, 500ms or 2m (allowed %s..%s)", t, catalog.MinDuration, catalog.MaxDuration)
			return
		}
		if dur < catalog.MinDuration || dur > catalog.MaxDuration {
			// Said here: a duration of 0 would otherwise read as none
			// given, and be reported as loops 0.
			d.bad(p, v, "duration %s: allowed %s..%s", dur, catalog.MinDuration, catalog.MaxDuration)
			return
		}
		*dst = dur
	}
}

// ratio decodes a compressibility under zstd; its range is Validate's.
func (d *specDecoder) ratio(dst *float64) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		t, ok := d.scalar(p, v, "a number")
		if !ok {
			return
		}
		r, err := strconv.ParseFloat(t, 64)
		if err != nil {
			d.bad(p, v, "%q is not a number: allowed %g (random) .. %g", t, catalog.MinRatio, catalog.MaxRatio)
			return
		}
		*dst = r
	}
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
