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
		return st, fmt.Errorf("stat %q: no name in parentheses", clip(b))
	}
	st.Comm = b[open+1 : end]
	rest := b[end+1:]
	var utime, stime, cutime, cstime uint64
	for field := 3; field <= procStatLastField; field++ {
		var f []byte
		f, rest = nextField(rest)
		if f == nil {
			return st, fmt.Errorf("stat %q: %d fields, want at least %d", clip(b), field-1, procStatLastField)
		}
		ok := true
		switch field {
		case 4:
			var v uint64
			v, ok = parseDecimal(f)
			ok = ok && v < 1<<31
			st.PPID = int(v)
		case 14:
			utime, ok = parseDecimal(f)
		case 15:
			stime, ok = parseDecimal(f)
		case 16:
			cutime, ok = parseDecimal(f)
		case 17:
			cstime, ok = parseDecimal(f)
		case 22:
			st.Start, ok = parseDecimal(f)
		}
		if !ok {
			return st, fmt.Errorf("stat %q: field %d is %q", clip(b), field, f)
		}
	}
	st.Ticks, st.ChildTicks = utime+stime, cutime+cstime
	return st, nil
}

// parseSchedstat parses /proc/<pid>/task/<tid>/schedstat: the nanoseconds
// the thread has run on a CPU, then those it has waited on a run queue.
func parseSchedstat(b []byte) (runNs, waitNs int64, err error) {
	f1, rest := nextField(b)
	f2, _ := nextField(rest)
	run, ok1 := parseDecimal(f1)
	wait, ok2 := parseDecimal(f2)
	if !ok1 || !ok2 || run > 1<<62 || wait > 1<<62 {
		return 0, 0, fmt.Errorf("schedstat %q: want the run and wait times in ns first", clip(b))
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

// nextField returns the first space-separated field of b and what follows
// it; field is nil when b holds no more fields.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return nil, nil
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseDecimal parses an unsigned decimal without the string conversion
// strconv would need.
func parseDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// clip shortens a line quoted in a note or error.
func clip(b []byte) string {
	const max = 80
	b = bytes.TrimRight(b, "\n")
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
