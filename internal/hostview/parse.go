package hostview

// Parsers for the Linux /proc files a snapshot reads. They carry no build
// tag so that they are tested on every OS against fixture text; they take
// bytes and allocate nothing, since a snapshot parses one line per process
// on the host.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/procfs"
)

// procStat is what a snapshot takes from /proc/<pid>/stat.
type procStat struct {
	Comm []byte // the name, without its parentheses; valid until the next read
	PPID int
	// Ticks is utime + stime, ChildTicks cutime + cstime, in clock ticks.
	Ticks, ChildTicks uint64
	Start             uint64 // starttime, in ticks since boot
}

// procStatLastField is field 22 (starttime), the last one parsed; fields
// are numbered from 1 as in proc(5).
const procStatLastField = 22

// parseProcStat parses a /proc/<pid>/stat line. The name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	var st procStat
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return st, fmt.Errorf("stat %q: no name in parentheses", procfs.Clip(b))
	}
	st.Comm = b[open+1 : end]
	rest := b[end+1:]
	var utime, stime, cutime, cstime uint64
	for field := 3; field <= procStatLastField; field++ {
		var f []byte
		f, rest = procfs.NextField(rest)
		if f == nil {
			return st, fmt.Errorf("stat %q: %d fields, want at least %d", procfs.Clip(b), field-1, procStatLastField)
		}
		ok := true
		switch field {
		case 4:
			var v uint64
			v, ok = procfs.ParseDecimal(f)
			ok = ok && v < 1<<31
			st.PPID = int(v)
		case 14:
			utime, ok = procfs.ParseDecimal(f)
		case 15:
			stime, ok = procfs.ParseDecimal(f)
		case 16:
			cutime, ok = procfs.ParseDecimal(f)
		case 17:
			cstime, ok = procfs.ParseDecimal(f)
		case 22:
			st.Start, ok = procfs.ParseDecimal(f)
		}
		if !ok {
			return st, fmt.Errorf("stat %q: field %d is %q", procfs.Clip(b), field, f)
		}
	}
	st.Ticks, st.ChildTicks = utime+stime, cutime+cstime
	return st, nil
}

// parseSchedstat parses /proc/<pid>/task/<tid>/schedstat: the nanoseconds
// the thread has run on a CPU, then those it has waited on a run queue.
func parseSchedstat(b []byte) (runNs, waitNs int64, err error) {
	f1, rest := procfs.NextField(b)
	f2, _ := procfs.NextField(rest)
	run, ok1 := procfs.ParseDecimal(f1)
	wait, ok2 := procfs.ParseDecimal(f2)
	if !ok1 || !ok2 || run > 1<<62 || wait > 1<<62 {
		return 0, 0, fmt.Errorf("schedstat %q: want the run and wait times in ns first", procfs.Clip(b))
	}
	return int64(run), int64(wait), nil
}

// countCPUList counts the CPUs of a kernel cpulist ("0-7,16").
func countCPUList(s string) (int, error) {
	s = strings.TrimSpace(s)
	n := 0
	if s == "" {
		return 0, fmt.Errorf("cpu list is empty")
	}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0, fmt.Errorf("cpu list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b >= 1<<16 {
				return 0, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		n += b - a + 1
	}
	return n, nil
}
