package hostview

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"

	"github.com/qoslab/qoslab/internal/telemetry"
)

// sysReader reads /proc. One pass over /proc/<pid>/stat per snapshot, one
// schedstat per vCPU thread; the read buffer, the path buffer, each
// process's open stat file and its name are kept from one snapshot to the
// next. Re-reading an open /proc file from offset 0 costs a third of
// opening, reading and closing it (0.5 against 1.5 ms for 90 processes),
// and an open /proc/<pid>/stat keeps naming its process: once that process
// has ended it reads as an error, never as a newcomer given its pid.
type sysReader struct {
	hz    int64 // USER_HZ: /proc's clock ticks per second
	buf   []byte
	path  []byte
	procs map[int]*procFile
	gen   uint64 // snapshot count, to close the files of processes gone
	n     int    // processes in the last snapshot, to size the next
}

// procFile is a process's stat file, open, and the name last read in it.
type procFile struct {
	fd   int // -1: not kept open (over maxOpen)
	name string
	gen  uint64
}

// maxOpen bounds the stat files kept open, well under any limit on open
// files; a host with more processes opens the rest each time.
const maxOpen = 1024

// Close closes the files the reader keeps open.
func (sr *sysReader) Close() {
	for pid, f := range sr.procs {
		if f.fd >= 0 {
			syscall.Close(f.fd)
		}
		delete(sr.procs, pid)
	}
}

func (sr *sysReader) read(r *Reader, t Target, s *Snapshot) {
	if sr.hz <= 0 {
		sr.hz = int64(telemetry.ClockTicks())
	}
	if sr.buf == nil {
		sr.buf = make([]byte, 4096)
		sr.procs = map[int]*procFile{}
	}
	s.At = r.now()
	for _, tid := range t.VCPUTIDs {
		tt := ThreadTimes{TID: tid}
		b, err := sr.readFile(r.root, "proc", t.PID, "task", tid, "schedstat")
		if t.PID == 0 {
			// /proc/<tid> is there for every thread, though not listed.
			b, err = sr.readFile(r.root, "proc", tid, "", 0, "schedstat")
		}
		if err == nil {
			tt.RunNs, tt.WaitNs, err = parseSchedstat(b)
		}
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("vCPU thread %d of process %d: %v", tid, t.PID, err))
		} else {
			tt.OK = true
		}
		s.VCPUs = append(s.VCPUs, tt)
	}
	s.HostCPUs = runtime.NumCPU()
	if b, err := os.ReadFile(filepath.Join(r.root, "sys/devices/system/cpu/online")); err == nil {
		if n, err := countCPUList(string(b)); err == nil {
			s.HostCPUs = n
		} else {
			s.Notes = append(s.Notes, fmt.Sprintf("/sys/devices/system/cpu/online: %v: host CPUs counted as this process may use them", err))
		}
	}
	sr.readProcs(r.root, s)
}

// readProcs reads every process's stat. A process that ends while /proc is
// listed is simply not seen; a stat that does not parse is a note.
func (sr *sysReader) readProcs(root string, s *Snapshot) {
	d, err := os.Open(filepath.Join(root, "proc")) //nolint:gosec // G304: /proc under the reader's root
	if err != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("processes not read: %v", err))
		return
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("processes not read: %v", err))
		return
	}
	s.Procs = make([]ProcTimes, 0, max(sr.n, len(names)))
	tick := int64(1e9) / sr.hz
	sr.gen++
	open := 0
	for _, f := range sr.procs {
		if f.fd >= 0 {
			open++
		}
	}
	var garbled int
	for _, name := range names {
		if !isPID(name) {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		f, b, ok := sr.statOf(root, pid, &open)
		if !ok {
			continue // ended since the listing
		}
		f.gen = sr.gen
		st, err := parseProcStat(b)
		if err != nil {
			garbled++
			if garbled == 1 {
				s.Notes = append(s.Notes, fmt.Sprintf("process %d: %v", pid, err))
			}
			continue
		}
		if f.name != string(st.Comm) {
			f.name = string(st.Comm)
		}
		s.Procs = append(s.Procs, ProcTimes{PID: pid, PPID: st.PPID, Start: st.Start, Name: f.name,
			SelfNs: int64(st.Ticks) * tick, ChildNs: int64(st.ChildTicks) * tick})
	}
	if garbled > 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d processes' stat did not parse: their CPU time is not counted", garbled))
	}
	sr.forgetGone()
	// /proc lists processes in pid order; a tree elsewhere may not.
	if !slices.IsSortedFunc(s.Procs, byPID) {
		slices.SortFunc(s.Procs, byPID)
	}
	sr.n = len(s.Procs)
	s.ProcsRead = true
}

// readFile reads root/dir/pid[/sub/tid]/file into the reader's buffer; the
// bytes are valid until the next read.
func (sr *sysReader) readFile(root, dir string, pid int, sub string, tid int, file string) ([]byte, error) {
	fd, err := sr.open(root, dir, pid, sub, tid, file)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	return sr.pread(fd)
}

// open opens root/dir/pid[/sub/tid]/file, close-on-exec (the agent and
// the hypervisor are started beside the reader). The system call itself:
// an *os.File would cost an allocation and a poller registration.
func (sr *sysReader) open(root, dir string, pid int, sub string, tid int, file string) (int, error) {
	p := append(sr.path[:0], root...)
	if len(p) == 0 || p[len(p)-1] != '/' {
		p = append(p, '/')
	}
	p = append(p, dir...)
	p = append(p, '/')
	p = strconv.AppendInt(p, int64(pid), 10)
	if sub != "" {
		p = append(p, '/')
		p = append(p, sub...)
		p = append(p, '/')
		p = strconv.AppendInt(p, int64(tid), 10)
	}
	p = append(p, '/')
	p = append(p, file...)
	sr.path = p
	for {
		fd, err := syscall.Open(string(p), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// pread reads an open file from its start into the reader's buffer: /proc
// makes a file's text afresh on each read from offset 0.
func (sr *sysReader) pread(fd int) ([]byte, error) {
	n := 0
	for {
		if n == len(sr.buf) {
			sr.buf = append(sr.buf, make([]byte, len(sr.buf))...)
			sr.buf = sr.buf[:cap(sr.buf)]
		}
		m, err := syscall.Pread(fd, sr.buf[n:], int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return sr.buf[:n], nil
		}
		n += m
	}
}

// statOf reads process pid's stat through the file kept open for it,
// opening it (while fewer than maxOpen are: open counts them) or reading
// it once where it has none; ok is false when the process has ended.
func (sr *sysReader) statOf(root string, pid int, open *int) (f *procFile, b []byte, ok bool) {
	f = sr.procs[pid]
	var err error
	if f != nil && f.fd >= 0 {
		if b, err = sr.pread(f.fd); err == nil {
			return f, b, true
		}
		// Ended: its pid may be another process's now.
		syscall.Close(f.fd)
		*open--
		f.fd = -1
	}
	fd := -1
	if *open < maxOpen {
		fd, err = sr.open(root, "proc", pid, "", 0, "stat")
		if err == nil {
			b, err = sr.pread(fd)
			if err != nil {
				syscall.Close(fd)
			}
		}
	} else {
		b, err = sr.readFile(root, "proc", pid, "", 0, "stat")
	}
	if err != nil {
		delete(sr.procs, pid)
		return nil, nil, false
	}
	if fd >= 0 {
		*open++
	}
	if f == nil {
		f = &procFile{}
		sr.procs[pid] = f
	}
	f.fd = fd
	return f, b, true
}

// forgetGone closes and forgets the files of processes the last pass did
// not see.
func (sr *sysReader) forgetGone() {
	for pid, f := range sr.procs {
		if f.gen != sr.gen {
			if f.fd >= 0 {
				syscall.Close(f.fd)
			}
			delete(sr.procs, pid)
		}
	}
}

// isPID says whether a /proc entry names a process.
func isPID(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	return true
}

func byPID(a, b ProcTimes) int { return a.PID - b.PID }
