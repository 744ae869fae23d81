package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// parseThreads reads "4", "1-4", "1,2,4" or "1-2,8" into ascending-as-given,
// de-duplicated counts within 1..maxN.
func parseThreads(s string, maxN int) ([]int, error) {
	const allowed = `a count, a range "1-4" or a list "1,2,4"`
	var out []int
	seen := map[int]bool{}
	add := func(n int) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty thread list: allowed %s, each 1..%d", allowed, maxN)
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("threads %q: %q is not a whole number; allowed %s, each 1..%d", s, part, allowed, maxN)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil, fmt.Errorf("threads %q: %q is not a range; allowed %s, each 1..%d", s, part, allowed, maxN)
			}
			if b < a {
				return nil, fmt.Errorf("threads %q: range %q runs backwards; write %d-%d", s, part, b, a)
			}
		}
		if a < 1 || b > maxN {
			return nil, fmt.Errorf("threads %q: %q is outside 1..%d", s, part, maxN)
		}
		for n := a; n <= b; n++ {
			add(n)
		}
	}
	return out, nil
}

// parseCount reads a positive whole count, allowing scientific notation
// ("2e8", "1.5e9") and digit groups ("200_000_000"), up to maxN.
func parseCount(name, s string, maxN uint64) (uint64, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	if n, err := strconv.ParseUint(t, 10, 64); err == nil {
		if n < 1 || n > maxN {
			return 0, fmt.Errorf("%s %q: allowed 1..%d", name, s, maxN)
		}
		return n, nil
	} else if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return 0, fmt.Errorf("%s %q overflows: allowed 1..%d", name, s, maxN)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("%s %q is not a count: write a whole number such as 200000000 or 2e8", name, s)
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("%s %q is not a whole number", name, s)
	}
	if f < 1 || f > float64(maxN) {
		return 0, fmt.Errorf("%s %q: allowed 1..%d (%.3g)", name, s, maxN, float64(maxN))
	}
	return uint64(f), nil
}

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// parseSize reads a byte size: "1GiB", "512MiB", "1.5GB", "1e9", "4096".
func parseSize(name, s string, maxN int64) (int64, error) {
	t := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "_", ""))
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("%s %q is not a size: write e.g. 1GiB, 256MiB, 1e9", name, s)
	}
	v := f * mult
	if v < 1 || v > float64(maxN) {
		return 0, fmt.Errorf("%s %q: allowed 1 byte..%d bytes", name, s, maxN)
	}
	return int64(v), nil
}

// formatBytes prints a byte count in binary units.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
