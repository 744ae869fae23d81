package telemetry

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// defaultClockTicks is USER_HZ on x86, arm64 and the other Linux ports.
const defaultClockTicks = 100

// procProbe samples /proc and /sys; it is not safe for concurrent use (one
// Recorder at a time). The files it reads every sample are
// opened once and re-read from offset 0 (pread): /proc and sysfs generate
// their text afresh on each read from the start, and an open
// /proc/<pid>/task/<tid> file keeps naming its thread, so a reused thread id
// reads as an exited thread rather than as a stranger.
type procProbe struct {
	root string
	hz   float64
	now  func() time.Time // the monotonic clock; tests fix it

	stat  *os.File
	buf   []byte         // read buffer, len == cap, grown as needed
	ticks []procCPUTicks // this sample's /proc/stat lines
	prev  []cpuPrev      // the previous reading, by CPU id
	// present marks the CPUs of this sample's /proc/stat, by CPU id.
	present []bool
	types   map[int]string // core type by CPU id, from start-up
	freq    []cpuFreqFile  // by CPU id, opened on first use
	rapl    []raplZone

	threads map[ThreadRef]*threadTrack
	// gone holds threads that exited or were never found, noted once,
	// with the sample (gen) that last asked for them.
	gone map[ThreadRef]uint64
	gen  uint64 // sample count, to forget threads no longer asked for

	last    time.Time // when the previous sample was taken
	sampled bool      // a sample has been taken (the next have rates)
	pending []string  // start-up notes, given with the first sample
}

// cpuPrev is a CPU's previous /proc/stat reading: seen when the CPU was
// listed (online), valid when its line parsed.
type cpuPrev struct {
	ticks procCPUTicks
	seen  bool
	valid bool
}

type cpuFreqFile struct {
	f      *os.File
	absent bool // no cpufreq for this CPU: not retried every sample
}

// raplZone is one powercap RAPL zone whose energy counter is followed: a
// package, or a package's cores.
type raplZone struct {
	name     string // "package-0", "core"
	pkg      bool   // a package zone (else cores)
	f        *os.File
	maxRange uint64 // max_energy_range_uj; 0 when unreadable
	prev     uint64
	primed   bool
}

// threadTrack is a followed thread's open files and last reading.
type threadTrack struct {
	stat  *os.File
	sched *os.File // schedstat; nil where the kernel has none
	ticks uint64
	runNs uint64
	// at is when ticks and runNs were read: a thread's busy share is its
	// CPU time over the time between its own two readings, not between
	// two samples' starts.
	at     time.Time
	primed bool
	gen    uint64
	// policy is the last policy string, reused while policy, nice and
	// rtprio stay put, so that a steady thread costs no formatting.
	policy    string
	policyKey [3]int
}

// procOptions configure the Linux sampler.
type procOptions struct {
	// Root is where proc/ and sys/ are found: "" is "/". Tests point it
	// at a recorded tree.
	Root string
	// ClockTicks is USER_HZ, the unit of the tick counts in /proc; 0 reads
	// it from the auxiliary vector (AT_CLKTCK in <root>/proc/self/auxv)
	// and falls back to 100, its value on every architecture Go runs
	// Linux on.
	ClockTicks int
}

// newProcProbe opens a sampler over /proc and /sys under o.Root. Only
// /proc/stat is required (without it the error is an *UnavailableError); frequencies, RAPL power and core types are read
// where the machine has them, and what is missing is said in the first
// sample's notes.
func newProcProbe(o procOptions) (Probe, error) {
	root := o.Root
	if root == "" {
		root = "/"
	}
	p := &procProbe{
		root:    root,
		now:     time.Now,
		buf:     make([]byte, 16<<10),
		threads: map[ThreadRef]*threadTrack{},
		gone:    map[ThreadRef]uint64{},
	}
	f, err := os.Open(p.path("proc/stat"))
	if err != nil {
		return nil, &UnavailableError{
			Sampler: SamplerProc,
			Reason:  err.Error(),
			Fix:     "mount /proc (mount -t proc proc /proc)",
		}
	}
	p.stat = f

	hz := o.ClockTicks
	if hz <= 0 {
		hz = p.clockTicks()
	}
	p.hz = float64(hz)

	online := p.readCPUList("sys/devices/system/cpu/online")
	p.ticks = make([]procCPUTicks, 0, max(len(online), 1))
	p.types = p.readCoreTypes()
	if ms, _ := filepath.Glob(p.path("sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq")); len(ms) == 0 {
		p.pending = append(p.pending, "no cpufreq scaling_cur_freq: CPU frequencies not read")
	}
	p.openRAPL()
	return p, nil
}

func (p *procProbe) Name() string { return SamplerProc }

func (p *procProbe) path(rel string) string { return filepath.Join(p.root, rel) }

// clockTicks reads USER_HZ from the auxiliary vector, which is where libc's
// sysconf(_SC_CLK_TCK) finds it.
func (p *procProbe) clockTicks() int { return clockTicksUnder(p.root) }

// ClockTicks is USER_HZ, the unit of every tick count in /proc (utime and
// stime in /proc/<pid>/stat), for other readers of /proc.
func ClockTicks() int { return clockTicksUnder("/") }

func clockTicksUnder(root string) int {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/auxv")) //nolint:gosec // G304: /proc under the probe's root
	if err == nil {
		if hz, ok := parseAuxvClockTicks(b, strconv.IntSize/8, binary.NativeEndian); ok {
			return hz
		}
	}
	return defaultClockTicks
}

// readCPUList reads a cpulist file; missing or garbled is no CPUs, with a
// note when garbled.
func (p *procProbe) readCPUList(rel string) []int {
	b, err := os.ReadFile(p.path(rel))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.pending = append(p.pending, fmt.Sprintf("read /%s: %v", rel, err))
		}
		return nil
	}
	cpus, err := parseCPUList(string(b))
	if err != nil {
		p.pending = append(p.pending, fmt.Sprintf("/%s: %v", rel, err))
	}
	return cpus
}

// readCoreTypes reads the core types once: they do not change while the
// machine runs.
func (p *procProbe) readCoreTypes() map[int]string {
	pCPUs := p.readCPUList("sys/devices/cpu_core/cpus")
	eCPUs := p.readCPUList("sys/devices/cpu_atom/cpus")
	capacity := map[int]uint64{}
	ms, _ := filepath.Glob(p.path("sys/devices/system/cpu/cpu[0-9]*/cpu_capacity"))
	for _, m := range ms {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(m)), "cpu"))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(m) //nolint:gosec // G304: a sysfs file under the probe's root
		if err != nil {
			continue
		}
		if c, err := parseUintFile(b); err == nil {
			capacity[id] = c
		} else {
			p.pending = append(p.pending, fmt.Sprintf("cpu %d cpu_capacity: %v", id, err))
		}
	}
	return coreTypes(pCPUs, eCPUs, capacity)
}

// openRAPL finds the powercap RAPL package zones and their core subzones.
// energy_uj is readable by root only since Linux 5.10 (the PLATYPUS
// side channel), so unreadable is the common case, and said once.
func (p *procProbe) openRAPL() {
	dirs, _ := filepath.Glob(p.path("sys/class/powercap/intel-rapl:*"))
	if len(dirs) == 0 {
		p.pending = append(p.pending, "no RAPL powercap zones: power not read")
		return
	}
	var denied []string
	for _, d := range dirs {
		nb, err := os.ReadFile(filepath.Join(d, "name")) //nolint:gosec // G304: a sysfs file under the probe's root
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(nb))
		isPkg := strings.HasPrefix(name, "package-")
		if !isPkg && name != "core" {
			continue // dram, uncore, psys: not the CPU's power
		}
		f, err := os.Open(filepath.Join(d, "energy_uj")) //nolint:gosec // G304: a sysfs file under the probe's root
		if err != nil {
			denied = append(denied, fmt.Sprintf("%s: %v", name, unwrapPathError(err)))
			continue
		}
		z := raplZone{name: name, pkg: isPkg, f: f}
		if b, err := os.ReadFile(filepath.Join(d, "max_energy_range_uj")); err == nil { //nolint:gosec // G304: a sysfs file under the probe's root
			z.maxRange, _ = parseUintFile(b)
		}
		p.rapl = append(p.rapl, z)
	}
	if len(denied) > 0 {
		p.pending = append(p.pending, "RAPL energy_uj not readable (root only since Linux 5.10), power not read: "+strings.Join(denied, "; "))
	}
}

// Sample reads the counters and reports the rates since the previous call.
// Nothing it fails to read fails the sample: each gap is a note. The error is
// only ctx's.
func (p *procProbe) Sample(ctx context.Context, refs []ThreadRef) (Sample, error) {
	if err := ctx.Err(); err != nil {
		return Sample{}, err
	}
	now := p.now()
	s := Sample{Sampler: SamplerProc, Notes: p.pending}
	p.pending = nil
	var interval time.Duration
	if p.sampled {
		interval = now.Sub(p.last)
		s.IntervalNs = int64(interval)
	}
	p.sampleCPUs(&s)
	p.samplePower(&s, interval)
	p.sampleThreads(&s, refs)
	p.last, p.sampled = now, true
	return s, nil
}

func (p *procProbe) sampleCPUs(s *Sample) {
	b, err := p.read(p.stat)
	if err != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("read /proc/stat: %v", err))
		return
	}
	var notes []string
	p.ticks, notes = parseProcStat(b, p.ticks[:0])
	s.Notes = append(s.Notes, notes...)

	// One backing array for every CPU's busy and MHz: two allocations per
	// sample instead of two per CPU.
	vals := make([]float64, 2*len(p.ticks))
	s.CPUs = make([]CPU, 0, len(p.ticks))
	present := p.present[:0]
	present = append(present, make([]bool, len(p.prev))...)
	p.present = present
	for i, t := range p.ticks {
		if t.ID >= len(p.prev) {
			p.prev = append(p.prev, make([]cpuPrev, t.ID+1-len(p.prev))...)
		}
		if t.ID < len(present) {
			present[t.ID] = true
		}
		c := CPU{ID: t.ID, Type: p.types[t.ID]}
		prev := &p.prev[t.ID]
		if !prev.seen && p.sampled {
			s.Notes = append(s.Notes, fmt.Sprintf("cpu %d came online", t.ID))
		}
		switch {
		case t.Garbled:
			// Busy stays unknown, and the next good line primes afresh.
			prev.valid = false
		case prev.seen && prev.valid:
			if busy, ok := cpuBusy(prev.ticks, t); ok {
				vals[2*i] = busy
				c.Busy = &vals[2*i]
			}
			prev.ticks = t
		default:
			prev.ticks, prev.valid = t, true
		}
		prev.seen = true
		if mhz, ok := p.readMHz(t.ID); ok {
			vals[2*i+1] = mhz
			c.MHz = &vals[2*i+1]
		}
		s.CPUs = append(s.CPUs, c)
	}
	var gone []int
	for id := range present {
		if p.prev[id].seen && !present[id] {
			p.prev[id] = cpuPrev{}
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		s.Notes = append(s.Notes, p.offlineNotes(gone)...)
	}
}

// offlineNotes explains CPUs that left /proc/stat, which lists online CPUs
// only; the online list is read to tell a CPU taken offline from a line lost.
func (p *procProbe) offlineNotes(gone []int) []string {
	online := map[int]bool{}
	b, err := os.ReadFile(p.path("sys/devices/system/cpu/online"))
	known := err == nil
	if known {
		cpus, err := parseCPUList(string(b))
		known = err == nil
		for _, c := range cpus {
			online[c] = true
		}
	}
	notes := make([]string, 0, len(gone))
	for _, id := range gone {
		if known && online[id] {
			notes = append(notes, fmt.Sprintf("cpu %d missing from /proc/stat though online", id))
		} else {
			notes = append(notes, fmt.Sprintf("cpu %d went offline", id))
		}
		if id < len(p.freq) && p.freq[id].f != nil {
			// cpufreq of an offline CPU reads as an error; reopen when
			// it returns.
			p.freq[id].f.Close()
			p.freq[id] = cpuFreqFile{}
		}
	}
	return notes
}

// readMHz reads a CPU's current frequency, opening its cpufreq file on first
// use; a CPU without one is not asked again.
func (p *procProbe) readMHz(id int) (float64, bool) {
	if id >= len(p.freq) {
		p.freq = append(p.freq, make([]cpuFreqFile, id+1-len(p.freq))...)
	}
	ff := &p.freq[id]
	if ff.absent {
		return 0, false
	}
	if ff.f == nil {
		f, err := os.Open(p.path(fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", id)))
		if err != nil {
			ff.absent = true
			return 0, false
		}
		ff.f = f
	}
	b, err := p.read(ff.f)
	if err != nil {
		return 0, false
	}
	mhz, err := parseKHzAsMHz(b)
	return mhz, err == nil
}

// samplePower turns the RAPL energy counters into package and core power
// over the interval. A group's power is given only when each of its zones
// read well.
func (p *procProbe) samplePower(s *Sample, interval time.Duration) {
	if len(p.rapl) == 0 {
		return
	}
	var pkgUJ, coreUJ uint64
	var pkgN, coreN int
	pkgOK, coreOK := interval > 0, interval > 0
	for i := range p.rapl {
		z := &p.rapl[i]
		ok := false
		b, err := p.read(z.f)
		var cur uint64
		if err == nil {
			cur, err = parseUintFile(b)
		}
		switch {
		case err != nil:
			s.Notes = append(s.Notes, fmt.Sprintf("RAPL %s: %v", z.name, err))
			z.primed = false
		case !z.primed:
			z.prev, z.primed = cur, true
		default:
			d, wrapped, err := energyDelta(z.prev, cur, z.maxRange)
			z.prev = cur
			if err != nil {
				s.Notes = append(s.Notes, fmt.Sprintf("RAPL %s: %v: no power for this interval", z.name, err))
				break
			}
			if wrapped {
				s.Notes = append(s.Notes, fmt.Sprintf("RAPL %s energy counter wrapped at %d µJ (accounted for)", z.name, z.maxRange))
			}
			ok = true
			if z.pkg {
				pkgUJ += d
			} else {
				coreUJ += d
			}
		}
		if z.pkg {
			pkgN++
			pkgOK = pkgOK && ok
		} else {
			coreN++
			coreOK = coreOK && ok
		}
	}
	secs := interval.Seconds()
	if pkgN > 0 && pkgOK {
		s.PackageW = Float(float64(pkgUJ) / 1e6 / secs)
	}
	if coreN > 0 && coreOK {
		s.CPUW = Float(float64(coreUJ) / 1e6 / secs)
	}
}

// sampleThreads reads each followed thread's CPU, policy and CPU time.
func (p *procProbe) sampleThreads(s *Sample, refs []ThreadRef) {
	p.gen++
	if len(refs) > 0 {
		s.Threads = make([]Thread, 0, len(refs))
	}
	var vals []float64
	for _, ref := range refs {
		if _, ok := p.gone[ref]; ok {
			p.gone[ref] = p.gen
			continue
		}
		tr := p.threads[ref]
		if tr == nil {
			var err error
			if tr, err = p.openThread(ref); err != nil {
				p.gone[ref] = p.gen
				s.Notes = append(s.Notes, fmt.Sprintf("thread %d (%s) not found: %v", ref.TID, ref.Role, unwrapPathError(err)))
				continue
			}
			p.threads[ref] = tr
		}
		tr.gen = p.gen
		readAt := p.now()
		b, err := p.read(tr.stat)
		var st procTaskStat
		if err == nil {
			st, err = parseTaskStat(b)
			if err == nil && st.exited() {
				err = syscall.ESRCH
			}
		}
		if err != nil {
			if errors.Is(err, syscall.ESRCH) || errors.Is(err, fs.ErrNotExist) {
				s.Notes = append(s.Notes, fmt.Sprintf("thread %d (%s) exited", ref.TID, ref.Role))
				p.gone[ref] = p.gen
				p.dropThread(ref, tr)
			} else {
				s.Notes = append(s.Notes, fmt.Sprintf("thread %d (%s): %v", ref.TID, ref.Role, err))
				tr.primed = false
			}
			continue
		}
		t := Thread{TID: ref.TID, Role: ref.Role, CPU: st.Processor, Policy: tr.policyString(st)}
		busy, ok := tr.busy(ref, st, p, readAt, s)
		if ok {
			if vals == nil {
				vals = make([]float64, len(refs))
			}
			i := len(s.Threads)
			vals[i] = busy
			t.Busy = &vals[i]
		}
		s.Threads = append(s.Threads, t)
	}
	// Threads no longer asked for (the last cell's workers) are let go,
	// so a probe kept across cells holds only the current ones.
	for ref, tr := range p.threads {
		if tr.gen != p.gen {
			p.dropThread(ref, tr)
		}
	}
	for ref, gen := range p.gone {
		if gen != p.gen {
			delete(p.gone, ref)
		}
	}
}

func (p *procProbe) openThread(ref ThreadRef) (*threadTrack, error) {
	dir := fmt.Sprintf("proc/%d/task/%d", ref.PID, ref.TID)
	if ref.PID == 0 {
		// /proc/<tid> is there for every thread, though not listed.
		dir = fmt.Sprintf("proc/%d", ref.TID)
	}
	f, err := os.Open(p.path(dir + "/stat"))
	if err != nil {
		return nil, err
	}
	tr := &threadTrack{stat: f}
	if sf, err := os.Open(p.path(dir + "/schedstat")); err == nil {
		tr.sched = sf
	}
	return tr, nil
}

func (p *procProbe) dropThread(ref ThreadRef, tr *threadTrack) {
	tr.stat.Close()
	if tr.sched != nil {
		tr.sched.Close()
	}
	delete(p.threads, ref)
}

// busy is the thread's CPU time since its last reading as a share of one
// CPU, over the time between the two readings (read at readAt): from
// schedstat's run time in ns where the kernel has it (exact), else from
// stat's utime+stime (10 ms steps). It updates the reading.
//
// A thread runs on one CPU at a time, so its share cannot pass 1. It did
// (a thread "busy 148%") when divided by the interval between two samples'
// starts: on a busy machine the sampler can be preempted between its start
// and this thread's reading, and the run time then covers more than that
// interval. What is left over 1 once each thread has its own interval is
// the resolution of the reading (a clock read just before the file, 10 ms
// ticks), and the share is capped at 1.
func (tr *threadTrack) busy(ref ThreadRef, st procTaskStat, p *procProbe, readAt time.Time, s *Sample) (float64, bool) {
	runNs, haveNs := uint64(0), false
	if tr.sched != nil {
		b, err := p.read(tr.sched)
		if err == nil {
			runNs, err = parseSchedstat(b)
		}
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("thread %d (%s) schedstat: %v: busy from tick counts", ref.TID, ref.Role, err))
			tr.sched.Close()
			tr.sched = nil
			tr.primed = false
		} else {
			haveNs = true
		}
	}
	interval := readAt.Sub(tr.at)
	primed := tr.primed && interval > 0
	prevTicks, prevNs := tr.ticks, tr.runNs
	tr.ticks, tr.runNs, tr.at, tr.primed = st.Ticks, runNs, readAt, true
	if !primed {
		return 0, false
	}
	var busy float64
	if haveNs {
		if runNs < prevNs {
			return 0, false
		}
		busy = float64(runNs-prevNs) / float64(interval)
	} else {
		if st.Ticks < prevTicks {
			return 0, false
		}
		busy = float64(st.Ticks-prevTicks) / p.hz / interval.Seconds()
	}
	return min(busy, 1), true
}

func (tr *threadTrack) policyString(st procTaskStat) string {
	key := [3]int{st.Policy, st.Nice, st.RTPrio}
	if tr.policy == "" || key != tr.policyKey {
		tr.policy, tr.policyKey = schedPolicyString(st.Policy, st.Nice, st.RTPrio), key
	}
	return tr.policy
}

// read re-reads an open file from its start into the probe's buffer; the
// result is valid until the next read.
func (p *procProbe) read(f *os.File) ([]byte, error) {
	n := 0
	for {
		if n == len(p.buf) {
			p.buf = append(p.buf, make([]byte, len(p.buf))...)
			p.buf = p.buf[:cap(p.buf)]
		}
		m, err := f.ReadAt(p.buf[n:], int64(n))
		n += m
		if errors.Is(err, io.EOF) {
			return p.buf[:n], nil
		}
		if err != nil {
			return nil, unwrapPathError(err)
		}
	}
}

// Close closes every file the probe holds open.
func (p *procProbe) Close() error {
	err := p.stat.Close()
	for _, ff := range p.freq {
		if ff.f != nil {
			ff.f.Close()
		}
	}
	for _, z := range p.rapl {
		z.f.Close()
	}
	for ref, tr := range p.threads {
		p.dropThread(ref, tr)
	}
	return err
}

// unwrapPathError keeps the errno of a *fs.PathError whose path the note
// already names ("thread 12 (worker 0) exited: no such process" rather than
// the full /proc path twice).
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// exited reports whether the stat is of a thread that has exited and waits
// to be reaped (zombie or dead).
func (st procTaskStat) exited() bool { return st.State == 'Z' || st.State == 'X' }
