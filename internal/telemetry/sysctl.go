package telemetry

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// perfLevel is one of macOS's CPU performance levels (hw.perflevelN): a set
// of identical cores. Level 0 is the fastest ("Performance"; "Super" on M5
// Pro/Max), the last the slowest ("Efficiency").
type perfLevel struct {
	Level        int    // N in hw.perflevelN
	Name         string // hw.perflevelN.name
	LogicalCPUs  int    // hw.perflevelN.logicalcpu
	PhysicalCPUs int    // hw.perflevelN.physicalcpu; 0 if not reported
	CPUsPerL2    int    // hw.perflevelN.cpusperl2 (the cluster size); 0 if not reported
}

// Type is the core type letter recorded in CPU.Type: "P" for Performance,
// "E" for Efficiency, otherwise the name's first letter upper-cased ("S" for
// Super), so a new level name still gets a distinct, recognisable label.
func (p perfLevel) Type() string {
	switch p.Name {
	case "Performance":
		return "P"
	case "Efficiency":
		return "E"
	}
	r, _ := utf8.DecodeRuneInString(p.Name)
	if r == utf8.RuneError {
		return ""
	}
	return string(unicode.ToUpper(r))
}

// parseSysctlPerfLevels reads the perf levels from `sysctl hw` output (or any
// `sysctl` output naming hw.nperflevels and hw.perflevelN.* keys): lines of
// "key: value" (also "key = value", as `sysctl -a` prints on some systems);
// other keys are ignored. Levels come back ordered by N. Every level needs a
// name and a logical CPU count, and the levels must be 0..hw.nperflevels-1:
// a topology with holes would label cores wrongly, so it is an error.
func parseSysctlPerfLevels(out []byte) ([]perfLevel, error) {
	byLevel := map[int]*perfLevel{}
	nLevels := -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for lineNo := 1; sc.Scan(); lineNo++ {
		key, value, ok := splitSysctlLine(sc.Text())
		if !ok {
			continue
		}
		if key == "hw.nperflevels" {
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("sysctl line %d: hw.nperflevels %q is not a count", lineNo, value)
			}
			nLevels = n
			continue
		}
		rest, ok := strings.CutPrefix(key, "hw.perflevel")
		if !ok {
			continue
		}
		num, field, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		level, err := strconv.Atoi(num)
		if err != nil || level < 0 {
			continue
		}
		pl := byLevel[level]
		if pl == nil {
			pl = &perfLevel{Level: level}
			byLevel[level] = pl
		}
		var dst *int
		switch field {
		case "name":
			pl.Name = strings.Trim(value, `"`)
			continue
		case "logicalcpu":
			dst = &pl.LogicalCPUs
		case "physicalcpu":
			dst = &pl.PhysicalCPUs
		case "cpusperl2":
			dst = &pl.CPUsPerL2
		default:
			continue
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("sysctl line %d: %s %q is not a count", lineNo, key, value)
		}
		*dst = n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read sysctl output: %w", err)
	}
	if len(byLevel) == 0 {
		return nil, fmt.Errorf("sysctl output has no hw.perflevel keys (not Apple silicon, or macOS before 12)")
	}
	if nLevels >= 0 && nLevels != len(byLevel) {
		return nil, fmt.Errorf("sysctl output: hw.nperflevels is %d but %d levels are listed", nLevels, len(byLevel))
	}
	levels := make([]perfLevel, 0, len(byLevel))
	for _, pl := range byLevel {
		levels = append(levels, *pl)
	}
	sort.Slice(levels, func(i, j int) bool { return levels[i].Level < levels[j].Level })
	for i, pl := range levels {
		switch {
		case pl.Level != i:
			return nil, fmt.Errorf("sysctl output: hw.perflevel%d is missing", i)
		case pl.Name == "":
			return nil, fmt.Errorf("sysctl output: hw.perflevel%d.name is missing", i)
		case pl.LogicalCPUs == 0:
			return nil, fmt.Errorf("sysctl output: hw.perflevel%d.logicalcpu is missing or 0", i)
		}
	}
	return levels, nil
}

// splitSysctlLine splits "hw.ncpu: 8" or "hw.ncpu = 8".
func splitSysctlLine(line string) (key, value string, ok bool) {
	i := strings.IndexAny(line, ":=")
	if i <= 0 {
		return "", "", false
	}
	return strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:]), true
}

// perfLevelCPUTypes labels CPU ids by perf level for a machine whose
// powermetrics output does not name its clusters. It assumes the slowest
// level's cores are numbered first, then the next faster level's and so on,
// as on M1-M4 chips up to Max (M1: E 0-3, P 4-7; M1 Max: E 0-1, P 2-9).
// Ultra chips interleave clusters (E0, P0, P1, E1...), so this is only a
// fallback, and the sample says it was used.
func perfLevelCPUTypes(levels []perfLevel) map[int]string {
	types := map[int]string{}
	id := 0
	for i := len(levels) - 1; i >= 0; i-- {
		for range levels[i].LogicalCPUs {
			types[id] = levels[i].Type()
			id++
		}
	}
	return types
}
