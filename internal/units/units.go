// Package units reads and prints the counts and sizes people type: "2e8"
// loops, "1-4" threads, "1GiB" of data.
package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseCounts reads thread or process counts: "4", "1-4", "1,2,4", "10-70/10"
// (a range with a step) or a mix such as "1-2,8", each within 1..maxN.
// Repeats are dropped; the order given is kept. what names the setting in
// errors ("threads").
func ParseCounts(what, s string, maxN int) ([]int, error) {
	allowed := fmt.Sprintf(`a count, a range "1-4", a stepped range "10-70/10" or a list "1,2,4", each 1..%d`, maxN)
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty %s list: allowed %s", what, allowed)
	}
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		rng, stepText, stepped := strings.Cut(part, "/")
		lo, hi, isRange := strings.Cut(rng, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("%s %q: %q is not a whole number; allowed %s", what, s, part, allowed)
		}
		b, step := a, 1
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil, fmt.Errorf("%s %q: %q is not a range; allowed %s", what, s, part, allowed)
			}
			if b < a {
				return nil, fmt.Errorf("%s %q: range %q runs backwards; write %d-%d", what, s, part, b, a)
			}
		}
		if stepped {
			if step, err = strconv.Atoi(strings.TrimSpace(stepText)); err != nil || step < 1 || !isRange {
				return nil, fmt.Errorf("%s %q: %q has a bad step; a step follows a range, as in 10-70/10", what, s, part)
			}
		}
		if a < 1 || b > maxN {
			return nil, fmt.Errorf("%s %q: %q is outside 1..%d", what, s, part, maxN)
		}
		for n := a; n <= b; n += step {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// quoted names a value in an error: `--loops "2e99"`, or just `"2e99"` when
// the caller has already said which setting it is.
func quoted(name, s string) string {
	if name == "" {
		return strconv.Quote(s)
	}
	return name + " " + strconv.Quote(s)
}

// ParseCount reads a positive whole count, allowing scientific notation
// ("2e8", "1.5e9") and digit groups ("200_000_000"), up to maxN. name names
// the setting in errors ("--loops").
func ParseCount(name, s string, maxN uint64) (uint64, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	if n, err := strconv.ParseUint(t, 10, 64); err == nil {
		if n < 1 || n > maxN {
			return 0, fmt.Errorf("%s: allowed 1..%d", quoted(name, s), maxN)
		}
		return n, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s overflows: allowed 1..%d", quoted(name, s), maxN)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("%s is not a count: write a whole number such as 200000000 or 2e8", quoted(name, s))
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("%s is not a whole number", quoted(name, s))
	}
	if f < 1 || f > float64(maxN) {
		return 0, fmt.Errorf("%s: allowed 1..%d (%.3g)", quoted(name, s), maxN, float64(maxN))
	}
	return uint64(f), nil
}

var sizeUnits = [...]struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseSize reads a byte size: "1GiB", "512MiB", "1.5GB", "1e9", "4096", up
// to maxN. name names the setting in errors ("--size").
func ParseSize(name, s string, maxN int64) (int64, error) {
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
		return 0, fmt.Errorf("%s is not a size: write e.g. 1GiB, 256MiB, 1e9", quoted(name, s))
	}
	v := f * mult
	if v < 1 || v > float64(maxN) {
		return 0, fmt.Errorf("%s: allowed 1 byte..%s", quoted(name, s), FormatBytes(maxN))
	}
	return int64(v), nil
}

// FormatBytes prints a byte count in binary units when it is a whole number
// of them.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<40 && n%(1<<40) == 0:
		return fmt.Sprintf("%dTiB", n>>40)
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// ScaleRate picks an SI prefix that keeps the largest rate (in unit per
// second) below a thousand and names the scaled unit: "MB/s" for bytes,
// "M loops/s" for counts. Divide rates by scale to show them in it.
func ScaleRate(unit string, largest float64) (label string, scale float64) {
	prefix, scale := "", 1.0
	switch largest = math.Abs(largest); {
	case largest >= 1e9:
		prefix, scale = "G", 1e9
	case largest >= 1e6:
		prefix, scale = "M", 1e6
	case largest >= 1e3:
		prefix, scale = "k", 1e3
	}
	switch {
	case unit == "bytes":
		return prefix + "B/s", scale
	case unit == "":
		return strings.TrimSpace(prefix + " per s"), scale
	case prefix == "":
		return unit + "/s", scale
	}
	return prefix + " " + unit + "/s", scale
}

// Plural counts things in words: Plural(1, "spinner thread") is "1 spinner
// thread", Plural(2, "spinner thread") "2 spinner threads".
func Plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// SI writes x with four significant digits and an SI prefix (k, M, G),
// "-" for NaN.
func SI(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	switch a := math.Abs(x); {
	case a >= 1e9:
		return fmt.Sprintf("%.4gG", x/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.4gM", x/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.4gk", x/1e3)
	}
	return fmt.Sprintf("%.4g", x)
}

// RateUnit is how a rate of unit per second is shown beside SI: bytes as
// MB/s (divide by the scale), counts as unit/s.
func RateUnit(unit string) (label string, scale float64) {
	if unit == "bytes" {
		return "MB/s", 1e6
	}
	return unit + "/s", 1
}

// FormatCount writes a count as people type it: "2e8" for a single digit
// followed by zeros from 1e3 up, the digits otherwise.
func FormatCount(n uint64) string {
	if n < 1000 {
		return strconv.FormatUint(n, 10)
	}
	exp := 0
	m := n
	for m%10 == 0 {
		m /= 10
		exp++
	}
	if m < 10 && exp >= 3 {
		return fmt.Sprintf("%de%d", m, exp)
	}
	return strconv.FormatUint(n, 10)
}
