package contention

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/workload"
)

// SpinnerCount is the contention a spec asks for: a number of spinner
// threads, or All for one on every CPU qoslab may use. run.json
// keeps what was asked ("all" or the number); the Contention record says
// how many ran and where.
type SpinnerCount int

// All asks for one spinner per CPU the host lets qoslab use.
const All SpinnerCount = -1

// MaxSpinners is the most spinners a count may ask for.
const MaxSpinners = 256

const allText = "all"

// ParseSpinnerCount reads a number 0..256 or "all"; the error names the bad
// value and what is allowed, with name (a flag, a key; may be empty) in
// front.
func ParseSpinnerCount(name, s string) (SpinnerCount, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, allText) {
		return All, nil
	}
	n, err := strconv.Atoi(strings.ReplaceAll(t, "_", ""))
	if err != nil || n < 0 || n > MaxSpinners {
		if name != "" {
			name += " "
		}
		return 0, fmt.Errorf("%s%q: allowed 0..%d spinner threads or %s (one per CPU)", name, s, MaxSpinners, allText)
	}
	return SpinnerCount(n), nil
}

// Resolve is the number of spinners to start on this host: "all" is one
// per CPU this process may use.
func (c SpinnerCount) Resolve() (int, error) {
	if c != All {
		return int(c), nil
	}
	allowed, err := workload.AllowedCPUs()
	if err != nil {
		return 0, fmt.Errorf("contention all: %w", err)
	}
	return c.count(len(allowed)), nil
}

// count is the number of spinners to start on a host whose qoslab may use
// cpus CPUs.
func (c SpinnerCount) count(cpus int) int {
	if c == All {
		return cpus
	}
	return int(c)
}

// Valid reports whether c is 0..MaxSpinners or All.
func (c SpinnerCount) Valid() bool {
	return c == All || (c >= 0 && c <= MaxSpinners)
}

// String is "all" or the number.
func (c SpinnerCount) String() string {
	if c == All {
		return allText
	}
	return strconv.Itoa(int(c))
}

// MarshalJSON writes "all" or the number.
func (c SpinnerCount) MarshalJSON() ([]byte, error) {
	if c == All {
		return json.Marshal(allText)
	}
	return json.Marshal(int(c))
}

// UnmarshalJSON reads "all" or a number, so run.json files written before
// "all" existed (a plain number) still load.
func (c *SpinnerCount) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := ParseSpinnerCount("contention", s)
		if err != nil {
			return err
		}
		*c = v
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("contention %s: allowed a number 0..%d or %q", b, MaxSpinners, allText)
	}
	if !SpinnerCount(n).Valid() {
		return fmt.Errorf("contention %d: allowed 0..%d spinner threads or %s", n, MaxSpinners, allText)
	}
	*c = SpinnerCount(n)
	return nil
}
