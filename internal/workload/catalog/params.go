package catalog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/units"
)

// Params are what a cell of a workload is asked to do besides its class and
// thread count: loops or a duration for the compute workloads; size, ratio,
// codec, level and sink for compression. Every layer that names a cell (a
// spec's matrix entry, the plan's cell runs, the records in samples.jsonl,
// the agent's request, the workload run) holds these, embedded, so a new
// parameter is declared here once; its JSON names are those of the results
// files and must not change.
type Params struct {
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
	Codec     string  `json:"codec,omitempty"`      // zstd, gzip, lz4, lzfse (darwin)
	Level     int     `json:"level,omitempty"`      // 0: the codec's default
	Sink      string  `json:"sink,omitempty"`       // file, block, null
	SinkPath  string  `json:"sink_path,omitempty"`  // directory for file, device for block
}

// ParamKey declares one cell parameter, once, for every layer that names
// it: its key in a spec's matrix entry and in a series key's text, the
// workloads that take it, its row in the spec's reference, bench's flag
// for it, its default, its check, and how a reader sees it. The spec's
// matrix entry (decode, encode, defaults, checks, docs/spec.md), bench's
// flags and request, the series keys that name cells, the dry run's
// listing and compare's work row all go over ParamKeys; the record holds
// Params itself (results.Record.Params, by its JSON tags). A new parameter
// is a field of Params and an entry here; reaching a workload also takes a
// field of the agent's request (agent.RequestOf).
type ParamKey struct {
	// Name is the key in a spec's matrix entry and in a series key's text
	// ("loops", "sink_path").
	Name string
	// Compression is true for the parameters compress and decompress take;
	// the others are the compute workloads' (and duration only theirs
	// that TakesDuration).
	Compression bool
	// Field is the field of p the parameter sets: a *uint64 (a count), a
	// *time.Duration, an *int64 (a size in bytes), a *float64, an *int or
	// a *string. Its type decides how a spec, a series key and bench's
	// flag read and write it.
	Field func(p *Params) any
	// Type, Default, Allowed and Doc are its row in the spec's reference
	// (docs/spec.md).
	Type, Default, Allowed, Doc string
	// Flag is bench's flag for it ("sink-path"), with its help, Usage; ""
	// for none.
	Flag, Usage string
	// Fill sets it to its default in p, a cell of w whose matrix entry
	// left it out; nil leaves it zero.
	Fill func(w Workload, p *Params)
	// Check is what is wrong with its value in p, for a cell of w with up
	// to maxThreads threads, worded to follow the matrix entry's path in a
	// spec's error: ".size 2 bytes: allowed ..." (or ": " and a problem of
	// two keys); "" when nothing is. nil allows any value.
	Check func(w Workload, p Params, maxThreads int) string
	// InKey says whether a series key's text holds it (always, for the
	// keys of the first results files); nil: when it is set.
	InKey func(p Params) bool
	// Quoted writes it quoted in a series key's text (a path may hold
	// spaces).
	Quoted bool
	// Show is it as a reader sees it (the dry run, compare): "loops 2e8",
	// "zstd level 3"; "" leaves it out (not set, or shown with another).
	// nil: its name and value when it is set.
	Show func(p Params) string
}

// ParamKeys lists the parameters as a spec's matrix entry takes them, in
// the order its reference shows them.
func ParamKeys() []ParamKey { return slices.Clone(paramKeys) }

var paramKeys = []ParamKey{
	{Name: "loops", Field: func(p *Params) any { return &p.Loops }, Type: "count", Default: loopsDefaults(),
		Allowed: fmt.Sprintf(`"2e8", "200_000_000": 1..%d per thread; pi: at least one per thread, in total`, uint64(MaxLoops)),
		Doc:     "compute and procs workloads: loops per thread (pi: iterations in total, split over the threads)",
		Flag:    "loops", Usage: "loops per thread (pi: iterations in total); 2e8 style accepted (default: per workload, about 1 s)",
		Fill: func(w Workload, p *Params) {
			if p.Duration == 0 {
				p.Loops = w.DefaultLoops
			}
		},
		Check: checkLoops, InKey: func(p Params) bool { return p.Duration == 0 },
		Show: func(p Params) string { return shown(p.Loops > 0, "loops "+units.FormatCount(p.Loops)) }},
	{Name: "duration", Field: func(p *Params) any { return &p.Duration }, Type: "duration", Default: "none: loops",
		Allowed: fmt.Sprintf("%s..%s, written 1s, 500ms, 2m; %s only; not with loops", MinDuration, MaxDuration, strings.Join(DurationNames(), ", ")),
		Doc:     "instead of loops: every thread runs its kernel until the cell's clock reaches it and the work done is the result (rates compare directly with loop cells); thread completion charts are skipped for these cells, as every thread ends at the deadline",
		Flag:    "duration", Usage: "instead of --loops (fp, int, mmul): every thread runs until the cell has lasted this long (1s, 500ms), and the work done is the result",
		Check: func(w Workload, p Params, _ int) string {
			if p.Duration == 0 {
				return ""
			}
			return problem(".duration: ", CheckDuration(w, p.Duration))
		},
		InKey: func(p Params) bool { return p.Duration > 0 },
		Show:  func(p Params) string { return shown(p.Duration > 0, "duration "+p.Duration.String()) }},
	{Name: "size", Compression: true, Field: func(p *Params) any { return &p.SizeBytes }, Type: "size", Default: units.FormatBytes(DefaultSize),
		Allowed: "one byte per thread .. " + units.FormatBytes(MaxDataBytes), Doc: "compress and decompress: bytes of generated input, split over the threads",
		Flag: "size", Usage: "compress/decompress: bytes of generated input, split over the threads",
		Fill: func(_ Workload, p *Params) { p.SizeBytes = DefaultSize },
		Check: func(_ Workload, p Params, maxThreads int) string {
			if least := int64(max(maxThreads, 1)); p.SizeBytes < least || p.SizeBytes > MaxDataBytes {
				return fmt.Sprintf(".size %d bytes: allowed %d (one per thread) .. %s", p.SizeBytes, least, units.FormatBytes(MaxDataBytes))
			}
			return ""
		},
		InKey: always, Show: func(p Params) string { return shown(p.SizeBytes > 0, "size "+units.FormatBytes(p.SizeBytes)) }},
	{Name: "ratio", Compression: true, Field: func(p *Params) any { return &p.Ratio }, Type: "number", Default: fmt.Sprint(DefaultRatio),
		Allowed: fmt.Sprintf("%g (random) .. %g", MinRatio, MaxRatio), Doc: "compress and decompress: compressibility of the generated input under zstd",
		Flag: "ratio", Usage: "compress/decompress: compressibility of the generated input (about N:1 under zstd)",
		Fill:  func(_ Workload, p *Params) { p.Ratio = DefaultRatio },
		Check: func(_ Workload, p Params, _ int) string { return problem(".ratio: ", CheckRatio(p.Ratio)) },
		InKey: always, Show: func(p Params) string { return shown(p.Ratio > 0, "ratio "+strconv.FormatFloat(p.Ratio, 'g', -1, 64)) }},
	// CheckLevel, not CheckCodec: a spec written here may name lzfse for a
	// Mac host; the agent that lacks a codec refuses the cell itself.
	{Name: "codec", Compression: true, Field: func(p *Params) any { return &p.Codec }, Type: "string", Default: DefaultCodec,
		Allowed: strings.Join(AllCodecs(), ", ") + " (lzfse on macOS only; a target without it refuses the run before measuring)", Doc: "compress and decompress: the codec",
		Flag: "codec", Usage: "compress/decompress codec: " + strings.Join(AllCodecs(), ", ") + " (lzfse: macOS only)",
		Fill:  func(_ Workload, p *Params) { p.Codec = DefaultCodec },
		Check: func(_ Workload, p Params, _ int) string { return problem(": ", CheckLevel(p.Codec, p.Level)) },
		InKey: always, Show: showCodec},
	{Name: "level", Compression: true, Field: func(p *Params) any { return &p.Level }, Type: "whole number", Default: "0, the codec's default",
		Allowed: levels(), Doc: "compress and decompress: the codec level",
		Flag: "level", Usage: "codec level (0: the codec's default)",
		InKey: always, Show: func(Params) string { return "" }}, // with the codec
	{Name: "sink", Compression: true, Field: func(p *Params) any { return &p.Sink }, Type: "string", Default: DefaultSink,
		Allowed: strings.Join(Sinks(), ", "), Doc: "compress and decompress: where output goes (file: fsync'd; in a VM, the VM's raw scratch disk)",
		Flag: "sink", Usage: "where compressed output goes: file (fsync'd), block (a raw device), null",
		Fill: func(_ Workload, p *Params) { p.Sink = DefaultSink }, Check: checkSink,
		InKey: always, Show: func(p Params) string { return shown(p.Sink != "", "sink "+p.Sink) }},
	{Name: "sink_path", Compression: true, Field: func(p *Params) any { return &p.SinkPath }, Type: "string", Default: "none",
		Allowed: "file: a directory (the host agent's scratch directory); block: a device whose contents may be overwritten",
		Doc:     "compress and decompress: where the sink writes; block needs it",
		Flag:    "sink-path", Usage: "file sink: directory (default: a temporary one); block sink: the device", Quoted: true},
}

// SeriesKey names what a cell measures, whichever repeat: its target,
// workload, class, thread count and the parameters that change the
// measurement. Its text (String) names cells in the results files.
type SeriesKey struct {
	Target   string
	Workload string
	QoS      int
	Threads  int
	Params
}

// String is the key's text, e.g. "host fp qos=9 threads=4 loops=200000000",
// "vm compress qos=33 threads=2 size=4194304 ratio=3 codec=zstd level=0
// sink=null". Its format is part of the results files; do not change it.
// ParseSeriesKey reads it back.
func (k SeriesKey) String() string {
	return fmt.Sprintf("%s %s qos=%d threads=%d %s", k.Target, k.Workload, k.QoS, k.Threads, ParamsText(k.Workload, k.Params))
}

// ParamsText is the parameters' part of a series key's text, as String
// writes it for the workload called name: "loops=200000000",
// "duration=1s", "size=4194304 ratio=3 codec=zstd level=0 sink=null".
// It tells apart two cells of one workload that differ only in what they
// were asked to do (analysis.CellKey.Params).
func ParamsText(name string, p Params) string {
	var parts []string
	for _, k := range paramKeys {
		if k.TakenBy(name) && k.inKey(p) {
			parts = append(parts, k.Name+"="+k.Text(p))
		}
	}
	return strings.Join(parts, " ")
}

// ParseSeriesKey reads a key's text as String writes it, followed by
// anything (" repeat=2" in a record's label) returned as rest. What it
// cannot read stays zero, and the first problem found is returned with it,
// so a label written by an older qoslab still gives what it holds.
func ParseSeriesKey(s string) (k SeriesKey, rest []string, err error) {
	problem := func(format string, a ...any) {
		if err == nil {
			err = fmt.Errorf("series key %q: "+format, append([]any{s}, a...)...)
		}
	}
	text := s
	for _, pk := range paramKeys {
		before, after, ok := strings.Cut(text, " "+pk.Name+"=")
		if !pk.Quoted || !ok {
			continue
		}
		quoted, qerr := strconv.QuotedPrefix(after)
		if qerr != nil {
			problem("%s %s is not a quoted string", pk.Name, after)
		} else {
			_ = pk.parse(&k.Params, quoted) // a quoted prefix unquotes
			after = after[len(quoted):]
		}
		text = before + after
	}
	fields := strings.Fields(text)
	if len(fields) < 2 || strings.Contains(fields[0], "=") || strings.Contains(fields[1], "=") {
		problem("want target and workload first")
	} else {
		k.Target, k.Workload = fields[0], fields[1]
		fields = fields[2:]
	}
	for _, f := range fields {
		name, v, _ := strings.Cut(f, "=")
		var ferr error
		switch name {
		case "qos":
			k.QoS, ferr = strconv.Atoi(v)
		case "threads":
			k.Threads, ferr = strconv.Atoi(v)
		default:
			if pk, ok := paramKeyNamed(name); ok && !pk.Quoted {
				ferr = pk.parse(&k.Params, v)
			} else {
				rest = append(rest, f)
			}
		}
		if ferr != nil {
			problem("%s: %v", f, ferr)
		}
	}
	return k, rest, err
}
