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
// schedstat per vCPU thread; the read buffer, the path buffer and the
// process names are reused from one snapshot to the next.
type sysReader struct {
	hz    int64 // USER_HZ: /proc's clock ticks per second
	buf   []byte
	path  []byte
	names map[int]string // last name seen by pid, so a name is made once
	procs int            // processes in the last snapshot, to size the next
}

func (sr *sysReader) read(r *Reader, t Target, s *Snapshot) {
	if sr.hz <= 0 {
		sr.hz = int64(telemetry.ClockTicks())
	}
	if sr.buf == nil {
		sr.buf = make([]byte, 4096)
		sr.names = map[int]string{}
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
	s.Procs = make([]ProcTimes, 0, max(sr.procs, len(names)))
	tick := int64(1e9) / sr.hz
	var garbled int
	for _, name := range names {
		if !isPID(name) {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		b, err := sr.readFile(root, "proc", pid, "", 0, "stat")
		if err != nil {
			continue // ended since the listing
		}
		st, err := parseProcStat(b)
		if err != nil {
			garbled++
			if garbled == 1 {
				s.Notes = append(s.Notes, fmt.Sprintf("process %d: %v", pid, err))
			}
			continue
		}
		n, ok := sr.names[pid]
		if !ok || n != string(st.Comm) {
			n = string(st.Comm)
			sr.names[pid] = n
		}
		s.Procs = append(s.Procs, ProcTimes{PID: pid, PPID: st.PPID, Start: st.Start, Name: n,
			SelfNs: int64(st.Ticks) * tick, ChildNs: int64(st.ChildTicks) * tick})
	}
	if garbled > 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d processes' stat did not parse: their CPU time is not counted", garbled))
	}
	// Forget the names of processes gone, so the map does not grow with
	// every pid the host ever used.
	if len(sr.names) > 2*len(s.Procs)+64 {
		seen := make(map[int]bool, len(s.Procs))
		for _, p := range s.Procs {
			seen[p.PID] = true
		}
		for pid := range sr.names {
			if !seen[pid] {
				delete(sr.names, pid)
			}
		}
	}
	// /proc lists processes in pid order; a tree elsewhere may not.
	if !slices.IsSortedFunc(s.Procs, byPID) {
		slices.SortFunc(s.Procs, byPID)
	}
	sr.procs = len(s.Procs)
	s.ProcsRead = true
}

// readFile reads root/dir/pid[/sub/tid]/file into the reader's buffer; the
// bytes are valid until the next read.
func (sr *sysReader) readFile(root, dir string, pid int, sub string, tid int, file string) ([]byte, error) {
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
	// The system calls themselves: an *os.File would cost an allocation
	// and a poller registration per process.
	fd, err := syscall.Open(string(p), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(sr.buf) {
			sr.buf = append(sr.buf, make([]byte, len(sr.buf))...)
			sr.buf = sr.buf[:cap(sr.buf)]
		}
		m, err := syscall.Read(fd, sr.buf[n:])
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
