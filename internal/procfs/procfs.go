// Package procfs parses the fields of /proc files without allocating:
// the telemetry sampler and the host view read them between cell runs.
package procfs

import "bytes"

// NextField returns the first space-separated field of b and what follows
// it; field is nil when b holds no more fields.
func NextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return nil, nil
	}
	j := i
	for j < len(b) && !IsSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

// IsSpace says whether c separates the fields of a /proc line.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ParseDecimal parses an unsigned decimal without the string conversion
// strconv would need.
func ParseDecimal(b []byte) (uint64, bool) {
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

// ParseSigned parses a small signed decimal (nice, CPU number, policy).
func ParseSigned(b []byte) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	v, ok := ParseDecimal(b)
	if !ok || v > 1<<31 {
		return 0, false
	}
	if neg {
		return -int(v), true
	}
	return int(v), true
}

// Clip shortens a line quoted in a note or error.
func Clip(b []byte) string {
	const max = 80
	b = bytes.TrimRight(b, "\n")
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
