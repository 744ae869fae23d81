package catalog

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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

// ParamKey is one parameter by the name a spec's matrix entry gives it
// ("loops", "size"), the name its value has in a series key's text.
type ParamKey struct {
	Name string
	// Compression is true for the parameters compress and decompress take;
	// the others are the compute workloads' (and duration only theirs
	// that TakesDuration).
	Compression bool
	// Field is the field of p the parameter sets: a *uint64 (a count), a
	// *time.Duration, an *int64 (a size in bytes), a *float64, an *int or
	// a *string.
	Field func(p *Params) any
}

// ParamKeys lists the parameters as a spec's matrix entry takes them, in
// the order its reference shows them.
func ParamKeys() []ParamKey {
	return []ParamKey{
		{"loops", false, func(p *Params) any { return &p.Loops }},
		{"duration", false, func(p *Params) any { return &p.Duration }},
		{"size", true, func(p *Params) any { return &p.SizeBytes }},
		{"ratio", true, func(p *Params) any { return &p.Ratio }},
		{"codec", true, func(p *Params) any { return &p.Codec }},
		{"level", true, func(p *Params) any { return &p.Level }},
		{"sink", true, func(p *Params) any { return &p.Sink }},
		{"sink_path", true, func(p *Params) any { return &p.SinkPath }},
	}
}

// ParamsTaken are the parameters of p the workload called name takes: the
// compression ones for compress and decompress, loops or a duration for
// the others. (A function, not a method: a method of Params would be one
// of every type that embeds it.)
func ParamsTaken(name string, p Params) Params {
	if IsCompression(name) {
		return Params{SizeBytes: p.SizeBytes, Ratio: p.Ratio, Codec: p.Codec, Level: p.Level, Sink: p.Sink, SinkPath: p.SinkPath}
	}
	return Params{Loops: p.Loops, Duration: p.Duration}
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
	var b strings.Builder
	k := SeriesKey{Workload: name, Params: p}
	switch {
	case IsCompression(k.Workload):
		fmt.Fprintf(&b, "size=%d ratio=%s codec=%s level=%d sink=%s", k.SizeBytes,
			strconv.FormatFloat(k.Ratio, 'g', -1, 64), k.Codec, k.Level, k.Sink)
		if k.SinkPath != "" {
			fmt.Fprintf(&b, " sink_path=%q", k.SinkPath)
		}
	case k.Duration > 0:
		fmt.Fprintf(&b, "duration=%s", k.Duration)
	default:
		fmt.Fprintf(&b, "loops=%d", k.Loops)
	}
	return b.String()
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
	if before, after, ok := strings.Cut(text, " sink_path="); ok {
		quoted, qerr := strconv.QuotedPrefix(after)
		if qerr != nil {
			problem("sink_path %s is not a quoted string", after)
		} else {
			k.SinkPath, _ = strconv.Unquote(quoted)
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
		case "loops":
			k.Loops, ferr = strconv.ParseUint(v, 10, 64)
		case "duration":
			k.Duration, ferr = time.ParseDuration(v)
		case "size":
			k.SizeBytes, ferr = strconv.ParseInt(v, 10, 64)
		case "ratio":
			k.Ratio, ferr = strconv.ParseFloat(v, 64)
		case "codec":
			k.Codec = v
		case "level":
			k.Level, ferr = strconv.Atoi(v)
		case "sink":
			k.Sink = v
		default:
			rest = append(rest, f)
		}
		if ferr != nil {
			problem("%s: %v", f, ferr)
		}
	}
	return k, rest, err
}
