package experiment

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// SpinnerCount is the contention a spec asks for: a number of spinner
// threads, or ContentionAll for one on every CPU qoslab may use. run.json
// keeps what was asked ("all" or the number); the Contention record says
// how many ran and where.
type SpinnerCount int

// ContentionAll asks for one spinner per CPU the host lets qoslab use.
const ContentionAll SpinnerCount = -1

const contentionAllText = "all"

// ParseSpinnerCount reads a number 0..256 or "all"; the error names the bad
// value and what is allowed, with name (a flag, a key; may be empty) in
// front.
func ParseSpinnerCount(name, s string) (SpinnerCount, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, contentionAllText) {
		return ContentionAll, nil
	}
	n, err := strconv.Atoi(strings.ReplaceAll(t, "_", ""))
	if err != nil || n < 0 || n > maxContention {
		if name != "" {
			name += " "
		}
		return 0, fmt.Errorf("%s%q: allowed 0..%d spinner threads or %s (one per CPU)", name, s, maxContention, contentionAllText)
	}
	return SpinnerCount(n), nil
}

// Count is the number of spinners to start on a host whose qoslab may use
// cpus CPUs.
func (c SpinnerCount) Count(cpus int) int {
	if c == ContentionAll {
		return cpus
	}
	return int(c)
}

// valid reports whether c is 0..maxContention or ContentionAll.
func (c SpinnerCount) valid() bool {
	return c == ContentionAll || (c >= 0 && c <= maxContention)
}

func (c SpinnerCount) String() string {
	if c == ContentionAll {
		return contentionAllText
	}
	return strconv.Itoa(int(c))
}

// MarshalJSON writes "all" or the number.
func (c SpinnerCount) MarshalJSON() ([]byte, error) {
	if c == ContentionAll {
		return json.Marshal(contentionAllText)
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
		return fmt.Errorf("contention %s: allowed a number 0..%d or %q", b, maxContention, contentionAllText)
	}
	if !SpinnerCount(n).valid() {
		return fmt.Errorf("contention %d: allowed 0..%d spinner threads or %s", n, maxContention, contentionAllText)
	}
	*c = SpinnerCount(n)
	return nil
}
