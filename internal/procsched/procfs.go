package procsched

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// readLinux reads the calling process's scheduling from the proc and
// cgroup file systems under root ("/" on a live system; tests give a
// tree of their own): the main thread's policy and nice from
// /proc/self/stat, the CPU limit from the cgroups /proc/self/cgroup names,
// cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us), wherever
// /proc/self/mountinfo says they are mounted. It reads nothing else and
// never fails: what it cannot read is said in Unread.
func readLinux(root string) Scheduling {
	var s Scheduling
	stat, err := os.ReadFile(filepath.Join(root, "proc/self/stat")) //nolint:gosec // G304: procfs under root ("/", or a test's)
	if err == nil {
		s.Policy, s.Nice, err = parseStat(stat)
	}
	if err != nil {
		s.Unread = append(s.Unread, fmt.Sprintf("policy and nice: %v", err))
	}
	limit, err := cgroupCPULimit(root)
	if err != nil {
		s.Unread = append(s.Unread, fmt.Sprintf("cgroup CPU limit: %v", err))
	}
	s.CPULimit = limit
	return s
}

// parseStat takes the policy (field 41) and nice (field 19) from a
// /proc/PID/stat line; the command (field 2) may hold spaces and
// parentheses, so fields are counted after its last ')'.
func parseStat(b []byte) (policy string, nice int, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, errors.New("/proc/self/stat has no command field")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 41-3+1 {
		return "", 0, fmt.Errorf("/proc/self/stat has %d fields, want 41 or more", len(f)+2)
	}
	nice, err = strconv.Atoi(f[19-3])
	if err != nil {
		return "", 0, fmt.Errorf("/proc/self/stat nice %q: %w", f[19-3], err)
	}
	p, err := strconv.Atoi(f[41-3])
	if err != nil {
		return "", 0, fmt.Errorf("/proc/self/stat policy %q: %w", f[41-3], err)
	}
	return PolicyName(p), nice, nil
}

// PolicyName names a Linux scheduling policy as sched(7) does.
func PolicyName(p int) string {
	switch p {
	case 0:
		return "SCHED_OTHER"
	case 1:
		return "SCHED_FIFO"
	case 2:
		return "SCHED_RR"
	case 3:
		return "SCHED_BATCH"
	case 5:
		return "SCHED_IDLE"
	case 6:
		return "SCHED_DEADLINE"
	case 7:
		return "SCHED_EXT"
	}
	return fmt.Sprintf("policy(%d)", p)
}

// mount is a cgroup file system as /proc/self/mountinfo lists it.
type mount struct {
	root, point string
	v2          bool
	controllers []string // v1: the super options naming controllers
}

// cgroupMounts lists the cgroup and cgroup2 mounts in mountinfo.
func cgroupMounts(b []byte) []mount {
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// id parent major:minor root point options [optional...] - type source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		switch g[0] {
		case "cgroup2":
			out = append(out, mount{root: unescape(f[3]), point: unescape(f[4]), v2: true})
		case "cgroup":
			out = append(out, mount{root: unescape(f[3]), point: unescape(f[4]), controllers: strings.Split(g[2], ",")})
		}
	}
	return out
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and '\'.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupCPULimit finds the tightest CPU limit between the process's
// cgroup and the root of its hierarchy: cgroup v2's cpu.max where the
// unified hierarchy holds the cpu controller, else v1's cpu controller.
// nil when none is set, or the hierarchy is not mounted where it could be
// read.
func cgroupCPULimit(root string) (*CPULimit, error) {
	cg, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup")) //nolint:gosec // G304: procfs under root ("/", or a test's)
	if err != nil {
		return nil, err
	}
	mi, err := os.ReadFile(filepath.Join(root, "proc/self/mountinfo")) //nolint:gosec // G304: procfs under root ("/", or a test's)
	if err != nil {
		return nil, err
	}
	mounts := cgroupMounts(mi)
	var v2Path, v1Path string
	var hasV1 bool
	sc := bufio.NewScanner(bytes.NewReader(cg))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2Path = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpu" {
				v1Path, hasV1 = parts[2], true
			}
		}
	}
	if hasV1 {
		for _, m := range mounts {
			if !m.v2 && contains(m.controllers, "cpu") {
				return tightest(root, m, v1Path, readV1Limit)
			}
		}
		return nil, errors.New("the cpu controller's cgroup v1 hierarchy is not mounted")
	}
	for _, m := range mounts {
		if m.v2 {
			return tightest(root, m, v2Path, readV2Limit)
		}
	}
	if v2Path != "" {
		return nil, errors.New("the cgroup v2 hierarchy is not mounted")
	}
	return nil, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// tightest walks from cgroup up to the mount's root and returns the
// smallest limit read on the way.
func tightest(root string, m mount, cgroup string, read func(dir string) (*CPULimit, error)) (*CPULimit, error) {
	rel, ok := strings.CutPrefix(cgroup, m.root)
	if !ok {
		// The cgroup lies outside what this mount shows (another
		// namespace's view): nothing to read.
		return nil, fmt.Errorf("cgroup %s is outside the hierarchy mounted at %s (root %s)", cgroup, m.point, m.root)
	}
	var best *CPULimit
	for p := path.Clean("/" + rel); ; p = path.Dir(p) {
		l, err := read(filepath.Join(root, m.point, p))
		if err != nil {
			return best, err
		}
		if l != nil && (best == nil || l.CPUs < best.CPUs) {
			l.Cgroup = path.Join(m.root, p)
			best = l
		}
		if p == "/" {
			return best, nil
		}
	}
}

// readV2Limit reads cpu.max ("max 100000", "50000 100000") in dir; nil for
// no limit or no file (the root cgroup has none).
func readV2Limit(dir string) (*CPULimit, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cpu.max")) //nolint:gosec // G304: the process's cgroup directory, found in procfs
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return nil, fmt.Errorf("%s: %q is not QUOTA PERIOD", filepath.Join(dir, "cpu.max"), b)
	}
	if f[0] == "max" {
		return nil, nil
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || period <= 0 || quota <= 0 {
		return nil, fmt.Errorf("%s: %q is not QUOTA PERIOD", filepath.Join(dir, "cpu.max"), b)
	}
	return &CPULimit{Setting: "cpu.max " + f[0] + " " + f[1], CPUs: quota / period}, nil
}

// readV1Limit reads cpu.cfs_quota_us (-1: no limit) and cpu.cfs_period_us
// in dir; nil for no limit or no files.
func readV1Limit(dir string) (*CPULimit, error) {
	qb, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us")) //nolint:gosec // G304: the process's cgroup directory, found in procfs
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	q := strings.TrimSpace(string(qb))
	quota, err := strconv.ParseFloat(q, 64)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a number", filepath.Join(dir, "cpu.cfs_quota_us"), q)
	}
	if quota < 0 {
		return nil, nil
	}
	pb, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us")) //nolint:gosec // G304: the process's cgroup directory, found in procfs
	if err != nil {
		return nil, err
	}
	p := strings.TrimSpace(string(pb))
	period, err := strconv.ParseFloat(p, 64)
	if err != nil || period <= 0 {
		return nil, fmt.Errorf("%s: %q is not a period", filepath.Join(dir, "cpu.cfs_period_us"), p)
	}
	return &CPULimit{Setting: "cpu.cfs_quota_us " + q + ", cpu.cfs_period_us " + p, CPUs: quota / period}, nil
}
