package agent

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
)

// ThisMachine describes the machine qoslab runs on as its agent's Info
// would (host name, OS and arch, logical CPUs, CPU model, core kinds),
// read here without starting an agent: for choices the controller makes
// before a run, such as which experiment shows the effect on it.
func ThisMachine() *agentpb.InfoReply {
	r := &agentpb.InfoReply{Os: runtime.GOOS, Arch: runtime.GOARCH, LogicalCpus: uint32(runtime.NumCPU())}
	r.Hostname, _ = os.Hostname()
	describeMachine(r)
	return r
}

// cpuInfo is what /proc/cpuinfo tells about the processor.
type cpuInfo struct {
	Model      string
	Hypervisor bool // x86 "hypervisor" flag: the CPU says it runs under one
	Logical    int
}

// parseCPUInfo reads /proc/cpuinfo text (x86 "model name"/"flags"; arm64 has
// no model name, so "CPU implementer"/"CPU part" are kept instead).
func parseCPUInfo(text string) cpuInfo {
	var ci cpuInfo
	var implementer, part string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			ci.Logical++
		case "model name", "Model":
			if ci.Model == "" {
				ci.Model = v
			}
		case "flags":
			for _, f := range strings.Fields(v) {
				if f == "hypervisor" {
					ci.Hypervisor = true
				}
			}
		case "CPU implementer":
			implementer = v
		case "CPU part":
			part = v
		}
	}
	if ci.Model == "" && implementer != "" {
		ci.Model = fmt.Sprintf("arm64 implementer %s part %s", implementer, part)
	}
	return ci
}

// parseMemTotal returns MemTotal from /proc/meminfo text, in bytes.
func parseMemTotal(text string) (uint64, error) {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) < 1 {
				break
			}
			kb, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo MemTotal %q: %w", rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("meminfo has no MemTotal line")
}

// levelsByCapacity groups CPUs by their Linux cpu_capacity (1024 = the
// biggest core). One group means a homogeneous CPU.
func levelsByCapacity(capacity map[int]uint32) []*agentpb.PerfLevel {
	groups := map[uint32][]uint32{}
	for cpu, c := range capacity {
		groups[c] = append(groups[c], uint32(cpu))
	}
	caps := make([]uint32, 0, len(groups))
	for c := range groups {
		caps = append(caps, c)
	}
	sort.Slice(caps, func(i, j int) bool { return caps[i] > caps[j] })
	var out []*agentpb.PerfLevel
	for i, c := range caps {
		cpus := groups[c]
		sort.Slice(cpus, func(a, b int) bool { return cpus[a] < cpus[b] })
		name := fmt.Sprintf("capacity %d", c)
		if len(caps) > 1 && i == 0 {
			name = "performance (" + name + ")"
		} else if len(caps) > 1 && i == len(caps)-1 {
			name = "efficiency (" + name + ")"
		}
		out = append(out, &agentpb.PerfLevel{Name: name, LogicalCpus: uint32(len(cpus)), Cpus: cpus, Capacity: c})
	}
	return out
}

// parseCPUList reads a kernel CPU list such as "0-3,8,10-11".
func parseCPUList(s string) ([]uint32, error) {
	var out []uint32
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 32); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, uint32(c))
		}
	}
	return out, nil
}

// osReleaseName returns PRETTY_NAME from /etc/os-release text.
func osReleaseName(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// virtualBoard finds, in a device tree's compatible property (strings
// separated by NULs), a board that only exists virtualized: QEMU's arm64
// virt machine, which has no DMI and, under TCG, no hypervisor node.
func virtualBoard(compatible []byte) (string, bool) {
	for _, c := range strings.Split(string(compatible), "\x00") {
		if c == "linux,dummy-virt" {
			return c + " (QEMU's virt machine)", true
		}
	}
	return "", false
}
