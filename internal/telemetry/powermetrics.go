package telemetry

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The powermetrics plist format is not documented by Apple beyond "-f plist:
// machine-readable property list, NUL-separated" (powermetrics(1)). The keys
// read here are the ones these parsers of real output read, checked against
// the recorded output they ship:
//
//   - graelo/pumas src/modules/powermetrics/plist_parsing.rs, with recorded
//     output in tests/data/powermetrics-output-m1.xml (M1, macOS 13.3,
//     22E252) and powermetrics-output-m2ultra.xml (M2 Ultra, macOS 14.4):
//     processor.clusters[].{name, freq_hz, idle_ratio, cpus[].{cpu, freq_hz,
//     idle_ratio}}, processor.{cpu_energy, cpu_power, combined_power},
//     elapsed_ns. In both files cpu_energy (mJ) / elapsed_ns equals
//     cpu_power, so the *_power keys are mean mW over the sample and the
//     *_energy keys mJ over it.
//   - tlkh/asitop asitop/parsers.py (clusters "E-Cluster", "P0-Cluster",
//     "P1-Cluster"; active = 1 - idle_ratio; before macOS 13 the processor
//     dict had cpu_energy, gpu_energy, ane_energy, dram_energy and
//     package_energy only, from macOS 13 combined_power replaces
//     package_energy) and asitop/utils.py (documents split at NUL bytes
//     found at the start of a line).
//   - fleetcmdr/fleetcmdr server/types.go (per-CPU down_ns/down_ratio,
//     per-cluster online_ratio in newer releases).
//   - okuvshynov/cubestat cubestat/readers/cpu.py (per-CPU util =
//     1 - idle_ratio).

// powermetricsPath is where macOS installs powermetrics. qoslab runs it by
// absolute path, never through PATH: it runs as root, and the sudoers line
// in the unavailable-error fix names exactly this file.
const powermetricsPath = "/usr/bin/powermetrics"

// maxPlistDocument caps one document of the stream. The recorded samples in
// graelo/pumas are 29 KB (M1) and 65 KB (M2 Ultra, cpu and gpu samplers);
// anything near this size is a runaway (a lost separator), skipped with a
// note instead of growing memory.
const maxPlistDocument = 16 << 20

// powermetricsArgs are powermetrics' arguments for one sample every interval,
// as a NUL-separated plist stream on stdout. Only the cpu_power sampler runs:
// it alone carries cluster and CPU residency, frequency and power, and every
// extra sampler costs CPU time on the machine being measured.
func powermetricsArgs(interval time.Duration) []string {
	ms := interval.Milliseconds()
	if ms <= 0 {
		ms = DefaultIntervalMs
	}
	return []string{"--samplers", "cpu_power", "-i", strconv.FormatInt(ms, 10), "-f", "plist"}
}

// powermetricsCommand decides how to start powermetrics: directly when qoslab
// runs as root, through `sudo -n` when a sudoers entry lets this user run it
// without a password (sudoOK), and otherwise not at all, with an
// *UnavailableError saying how to enable it.
func powermetricsCommand(interval time.Duration, root, sudoOK bool, uid int, user string) ([]string, error) {
	args := powermetricsArgs(interval)
	switch {
	case root:
		return append([]string{powermetricsPath}, args...), nil
	case sudoOK:
		return append([]string{"sudo", "-n", powermetricsPath}, args...), nil
	}
	return nil, powermetricsNeedsRoot(uid, user)
}

// powermetricsNeedsRoot is the error for a run without root.
func powermetricsNeedsRoot(uid int, user string) *UnavailableError {
	if user == "" {
		user = "YOUR_USER_NAME"
	}
	return &UnavailableError{
		Sampler: SamplerPowermetrics,
		Reason:  fmt.Sprintf("qoslab runs as uid %d and powermetrics needs root", uid),
		Fix: fmt.Sprintf("run qoslab with sudo, or let qoslab start powermetrics through sudo without a password: "+
			"run `sudo visudo -f /etc/sudoers.d/qoslab-powermetrics` and add the line\n\n    %s ALL=(root) NOPASSWD: %s\n",
			user, powermetricsPath),
	}
}

// powermetricsMissing is the error for a macOS without powermetrics.
func powermetricsMissing(err error) *UnavailableError {
	return &UnavailableError{
		Sampler: SamplerPowermetrics,
		Reason:  fmt.Sprintf("%s: %v", powermetricsPath, err),
		Fix:     "powermetrics ships with macOS; on a system without it (a minimal guest image) there is no macOS frequency or power telemetry",
	}
}

// A skippedDocumentError is one document of a powermetrics stream that gave
// no sample: it did not parse, was cut off at the end of the stream, or was
// too large. The stream goes on after it.
type skippedDocumentError struct {
	Doc       int  // 1-based position in the stream
	Truncated bool // cut off by the end of the stream (powermetrics killed mid-write)
	Err       error
}

func (e *skippedDocumentError) Error() string {
	if e.Truncated {
		return fmt.Sprintf("powermetrics document %d is cut off at the end of the stream: %v", e.Doc, e.Err)
	}
	return fmt.Sprintf("powermetrics document %d skipped: %v", e.Doc, e.Err)
}

func (e *skippedDocumentError) Unwrap() error { return e.Err }

// powermetricsReader reads the samples of a `powermetrics -f plist` stream:
// XML plist documents separated by NUL bytes. Next returns one sample per
// document; a document that yields no sample is a *skippedDocumentError and
// reading goes on. It is not safe for concurrent use.
type powermetricsReader struct {
	br     *bufio.Reader
	levels []perfLevel
	max    int

	cur      []byte // the document being assembled
	oversize bool   // cur went past max and is being discarded
	ready    []pmDocument
	docs     int // documents completed so far
	eof      bool
	readErr  error
}

type pmDocument struct {
	n        int
	body     []byte
	oversize bool
	atEOF    bool // ended by the end of the stream, not by a separator
}

// newPowermetricsReader reads powermetrics output from r. levels (from
// parseSysctlPerfLevels; may be nil) label core types when a cluster has no
// usable name.
func newPowermetricsReader(r io.Reader, levels []perfLevel) *powermetricsReader {
	return &powermetricsReader{br: bufio.NewReaderSize(r, 64<<10), levels: levels, max: maxPlistDocument}
}

// Next returns the next document's sample. At the end of the stream it
// returns io.EOF; a document that gives no sample returns a
// *skippedDocumentError, after which Next can be called again. Any other
// error is the reader's, and final.
func (r *powermetricsReader) Next() (Sample, error) {
	for {
		if len(r.ready) > 0 {
			d := r.ready[0]
			r.ready = r.ready[1:]
			return r.parse(d)
		}
		if r.eof {
			if r.readErr != nil {
				err := r.readErr
				r.readErr = nil
				return Sample{}, fmt.Errorf("read powermetrics output: %w", err)
			}
			return Sample{}, io.EOF
		}
		// Lines, not NUL-delimited chunks, so that a document is complete
		// at its </plist> line: powermetrics may write the separator only
		// when the next sample starts, an interval later.
		line, err := r.br.ReadSlice('\n')
		r.feed(line)
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			r.eof = true
			r.complete(true)
		default:
			r.eof = true
			r.readErr = err
			r.complete(true)
		}
	}
}

var (
	pmXMLDecl  = []byte("<?xml")
	pmPlistEnd = []byte("</plist>")
)

// feed adds bytes read to the document being assembled, completing a
// document at each NUL, at a </plist> line, and before an <?xml declaration,
// which can only start a document (in content it would be escaped): so a
// document cut off mid-stream does not swallow the next one.
func (r *powermetricsReader) feed(p []byte) {
	for len(p) > 0 {
		nul := bytes.IndexByte(p, 0)
		if decl := bytes.Index(p, pmXMLDecl); decl >= 0 && (nul < 0 || decl < nul) {
			r.add(p[:decl])
			if len(bytes.TrimSpace(r.cur)) > 0 || r.oversize {
				r.complete(false)
			}
			r.add(pmXMLDecl)
			p = p[decl+len(pmXMLDecl):]
			continue
		}
		if nul < 0 {
			r.add(p)
			break
		}
		r.add(p[:nul])
		r.complete(false)
		p = p[nul+1:]
	}
	if !r.oversize && bytes.HasSuffix(bytes.TrimRight(r.cur, " \t\r\n"), pmPlistEnd) {
		r.complete(false)
	}
}

func (r *powermetricsReader) add(p []byte) {
	if r.oversize {
		return
	}
	if len(r.cur)+len(p) > r.max {
		r.oversize = true
		r.cur = nil
		return
	}
	r.cur = append(r.cur, p...)
}

// complete ends the document being assembled; blank space between
// separators is not a document.
func (r *powermetricsReader) complete(atEOF bool) {
	body := bytes.TrimSpace(r.cur)
	if len(body) > 0 || r.oversize {
		r.docs++
		r.ready = append(r.ready, pmDocument{n: r.docs, body: bytes.Clone(body), oversize: r.oversize, atEOF: atEOF})
	}
	r.cur = r.cur[:0]
	r.oversize = false
}

func (r *powermetricsReader) parse(d pmDocument) (Sample, error) {
	if d.oversize {
		return Sample{}, &skippedDocumentError{Doc: d.n, Err: fmt.Errorf("larger than %d bytes (a lost separator?)", r.max)}
	}
	s, err := parsePowermetricsPlist(d.body, r.levels)
	if err != nil {
		// A clean end of stream (powermetrics -n) may leave the last
		// document without a separator; only one that does not parse was
		// cut off.
		return Sample{}, &skippedDocumentError{Doc: d.n, Truncated: d.atEOF, Err: err}
	}
	return s, nil
}

// parsePowermetricsPlist turns one powermetrics plist document into a sample
// (Sampler, IntervalNs, CPUs, Clusters, CPUW, PackageW, Notes). An error means
// the document is not a plist dictionary at all; keys that are missing or of
// the wrong type leave their fields nil with a note.
//
// Mapping: CPU.Busy and Cluster.Busy are active residency, 1 - idle_ratio;
// MHz is freq_hz / 1e6 (powermetrics' frequency while active); a CPU's Type
// is its cluster's letter ("E-Cluster" -> E, "P0-Cluster" -> P, M5's
// "M0-Cluster" -> M); CPUW is cpu_power (mW), PackageW combined_power (mW,
// CPU + GPU + ANE), or before macOS 13 cpu_energy and package_energy (mJ)
// over elapsed_ns.
func parsePowermetricsPlist(doc []byte, levels []perfLevel) (s Sample, err error) {
	root, err := decodePlistDict(doc)
	if err != nil {
		return Sample{}, err
	}
	p := &pmParse{s: Sample{Sampler: SamplerPowermetrics}, levels: levels}

	elapsed, ok := plistNum(root, "elapsed_ns")
	if ok && elapsed > 0 {
		p.s.IntervalNs = int64(elapsed)
	} else {
		p.note("powermetrics: no elapsed_ns; interval unknown")
	}

	proc, ok := root["processor"].(map[string]any)
	if !ok {
		p.note("powermetrics: no processor dictionary (was the cpu_power sampler on?)")
		return p.s, nil
	}
	p.s.CPUW = pmPower(proc, "cpu_power", "cpu_energy", p.s.IntervalNs)
	if p.s.CPUW == nil {
		p.note("powermetrics: no cpu_power or cpu_energy; CPU power unknown")
	}
	p.s.PackageW = pmPower(proc, "combined_power", "package_energy", p.s.IntervalNs)
	if p.s.PackageW == nil {
		p.note("powermetrics: no combined_power or package_energy; package power unknown")
	}

	clusters, ok := proc["clusters"].([]any)
	if !ok {
		p.note("powermetrics: no processor.clusters; per-CPU residency and frequency unknown")
		return p.s, nil
	}
	if len(clusters) == 0 {
		// A Mac that is itself a VM may list none: said, not silent.
		p.note("powermetrics: processor.clusters is empty; per-CPU residency and frequency unknown")
		return p.s, nil
	}
	for ci, c := range clusters {
		p.cluster(ci, c)
	}
	p.noteCPUs()
	sort.SliceStable(p.s.CPUs, func(i, j int) bool { return p.s.CPUs[i].ID < p.s.CPUs[j].ID })
	return p.s, nil
}

// pmParse is one document's sample as parsePowermetricsPlist fills it in,
// with the CPUs it has something to say about in one note each.
type pmParse struct {
	s      Sample
	levels []perfLevel
	// fallback is the CPU types from levels, made when a cluster's name
	// gives none.
	fallback map[int]string
	// fromSysctl, untyped: CPUs typed from levels, or not at all; down:
	// CPUs powered down for part of the interval, with the fraction.
	fromSysctl, untyped, down []string
}

func (p *pmParse) note(format string, args ...any) {
	p.s.Notes = append(p.s.Notes, fmt.Sprintf(format, args...))
}

// cluster reads processor.clusters[ci] and its CPUs.
func (p *pmParse) cluster(ci int, c any) {
	cd, ok := c.(map[string]any)
	if !ok {
		p.note("powermetrics: cluster %d is not a dictionary", ci)
		return
	}
	cl := Cluster{Name: plistStr(cd, "name")}
	if cl.Name == "" {
		cl.Name = fmt.Sprintf("cluster %d", ci)
		p.note("powermetrics: cluster %d has no name", ci)
	}
	cl.Type = pmClusterType(plistStr(cd, "name"))
	cl.MHz = pmMHz(cd)
	if cl.MHz == nil {
		p.note("powermetrics: %s: no freq_hz", cl.Name)
	}
	cl.Busy = pmBusy(cd)
	if cl.Busy == nil {
		p.note("powermetrics: %s: no idle_ratio", cl.Name)
	}
	p.s.Clusters = append(p.s.Clusters, cl)

	cpus, ok := cd["cpus"].([]any)
	if !ok {
		p.note("powermetrics: %s: no cpus", cl.Name)
		return
	}
	for i, c := range cpus {
		p.cpu(cl, i, c)
	}
}

// cpu reads entry i of cluster cl's cpus.
func (p *pmParse) cpu(cl Cluster, i int, c any) {
	pd, ok := c.(map[string]any)
	if !ok {
		p.note("powermetrics: %s: cpu entry %d is not a dictionary", cl.Name, i)
		return
	}
	id, ok := plistNum(pd, "cpu")
	if !ok || id < 0 || id != math.Trunc(id) {
		p.note("powermetrics: %s: cpu entry %d has no cpu number", cl.Name, i)
		return
	}
	cpu := CPU{ID: int(id), Type: cl.Type, Busy: pmBusy(pd), MHz: pmMHz(pd)}
	if cpu.Type == "" && len(p.levels) > 0 {
		if p.fallback == nil {
			p.fallback = perfLevelCPUTypes(p.levels)
		}
		if cpu.Type = p.fallback[cpu.ID]; cpu.Type != "" {
			p.fromSysctl = append(p.fromSysctl, strconv.Itoa(cpu.ID))
		}
	}
	if cpu.Type == "" {
		p.untyped = append(p.untyped, strconv.Itoa(cpu.ID))
	}
	if cpu.Busy == nil {
		p.note("powermetrics: cpu %d: no idle_ratio", cpu.ID)
	}
	if d, ok := plistNum(pd, "down_ratio"); ok && d > 0 {
		p.down = append(p.down, fmt.Sprintf("%d (%.3g)", cpu.ID, d))
	}
	p.s.CPUs = append(p.s.CPUs, cpu)
}

// noteCPUs adds one note for each list of CPUs collected on the way.
func (p *pmParse) noteCPUs() {
	if len(p.fromSysctl) > 0 {
		p.note("powermetrics: core types of cpus %s from sysctl perf levels (cluster names unusable), assuming the slowest cores are numbered first",
			strings.Join(p.fromSysctl, ","))
	}
	if len(p.untyped) > 0 {
		p.note("powermetrics: core types of cpus %s unknown (cluster names unusable, no perf levels for them)", strings.Join(p.untyped, ","))
	}
	if len(p.down) > 0 {
		// Whether idle_ratio includes the time a core is powered down is
		// not documented; say it rather than guess.
		p.note("powermetrics: cpus powered down for part of the interval (down_ratio): %s; busy is 1 - idle_ratio",
			strings.Join(p.down, ", "))
	}
}

// powermetricsStream is the sampler's portable core: it reads a running
// powermetrics' output (consume, in its own goroutine) and hands out what
// arrived since the previous call (take). The darwin probe only starts and
// stops the process around it.
type powermetricsStream struct {
	levels []perfLevel

	mu      sync.Mutex
	pending []Sample // parsed since the last take
	notes   []string // stream notes since the last take: skipped documents, exit
	ended   bool
	first   chan struct{} // closed at the first sample or the end of the stream
	once    sync.Once
}

// maxPendingSamples bounds memory when nobody calls Sample for a while (a
// long pause between cells): older samples are merged rather than dropped,
// so the next Sample still covers the whole time.
const maxPendingSamples = 64

func newPowermetricsStream(levels []perfLevel, notes ...string) *powermetricsStream {
	return &powermetricsStream{levels: levels, notes: notes, first: make(chan struct{})}
}

// consume reads r to its end. It returns when r does: at the end of the
// stream, or when r is closed under it.
func (s *powermetricsStream) consume(r io.Reader) {
	defer s.markFirst()
	pr := newPowermetricsReader(r, s.levels)
	for {
		sample, err := pr.Next()
		var skipped *skippedDocumentError
		switch {
		case err == nil:
			s.mu.Lock()
			s.pending = append(s.pending, sample)
			if len(s.pending) > maxPendingSamples {
				s.pending = []Sample{mergePowermetricsSamples(s.pending)}
			}
			s.mu.Unlock()
			s.markFirst()
		case errors.As(err, &skipped):
			s.note(skipped.Error())
		case errors.Is(err, io.EOF):
			return
		default:
			s.note(err.Error())
			return
		}
	}
}

func (s *powermetricsStream) markFirst() { s.once.Do(func() { close(s.first) }) }

func (s *powermetricsStream) note(n string) {
	s.mu.Lock()
	s.notes = append(s.notes, n)
	s.mu.Unlock()
}

// end records that powermetrics is gone, and why.
func (s *powermetricsStream) end(why string) {
	s.mu.Lock()
	s.ended = true
	s.notes = append(s.notes, why)
	s.mu.Unlock()
}

// started is closed when the first sample arrives or the stream ends
// without one; hasSamples tells which.
func (s *powermetricsStream) started() <-chan struct{} { return s.first }

func (s *powermetricsStream) hasSamples() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending) > 0
}

// take returns the samples parsed since the previous call merged into one,
// with the stream's notes; with none, a sample that only says so.
func (s *powermetricsStream) take() Sample {
	s.mu.Lock()
	pending, notes, ended := s.pending, s.notes, s.ended
	s.pending, s.notes = nil, nil
	s.mu.Unlock()

	out := mergePowermetricsSamples(pending)
	out.Sampler = SamplerPowermetrics
	if len(pending) == 0 {
		if ended {
			notes = append(notes, "powermetrics is not running; no telemetry since the previous sample")
		} else {
			notes = append(notes, "no powermetrics sample arrived since the previous sample")
		}
	}
	out.Notes = append(out.Notes, notes...)
	return out
}

// tailBuffer keeps the last bytes written to it: powermetrics' stderr, quoted
// when it exits, without letting a chatty process grow memory.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, []byte("?"))))
}

// powermetricsExitNote says why the powermetrics process ended.
func powermetricsExitNote(waitErr error, stderr string) string {
	msg := "powermetrics exited"
	if waitErr != nil {
		msg += ": " + waitErr.Error()
	}
	if stderr != "" {
		msg += " (stderr: " + stderr + ")"
	}
	return msg
}
