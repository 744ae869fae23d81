package telemetry

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"

	"howett.net/plist"
)

// decodePlistDict decodes a plist whose root is a dictionary. howett.net/plist
// re-panics runtime errors from its parsers; a garbled sample must never take
// the run down, so those become errors too.
func decodePlistDict(doc []byte) (root map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(runtime.Error); ok {
				err = fmt.Errorf("plist parser: %w", re)
				return
			}
			err = fmt.Errorf("plist parser: %v", r)
		}
	}()
	if plistTooDeep(doc, maxPlistDepth) {
		return nil, fmt.Errorf("not a powermetrics plist: containers nested deeper than %d", maxPlistDepth)
	}
	// powermetrics writes XML; the library's fallback to the text formats
	// would accept junk such as "{}" or an empty document as a sample.
	format, err := plist.Unmarshal(doc, &root)
	switch {
	case err != nil:
		return nil, fmt.Errorf("not a plist dictionary: %w", err)
	case format != plist.XMLFormat:
		return nil, fmt.Errorf("not an XML plist (%s format)", plist.FormatNames[format])
	case root == nil:
		return nil, errors.New("not a plist dictionary: empty")
	}
	return root, nil
}

// maxPlistDepth bounds the nesting of dicts and arrays. powermetrics nests 8
// deep (plist, processor, clusters, cluster, cpus, cpu, dvfm_states,
// state); the plist library parses recursively, and a garbled document
// nested a million deep would overflow the stack, which no recover catches.
const maxPlistDepth = 64

// plistTooDeep reports whether doc opens more than max <dict>/<array>
// elements without closing them, counting tags only (a cheap pass, before
// the real parse).
func plistTooDeep(doc []byte, max int) bool {
	depth := 0
	for {
		i := bytes.IndexByte(doc, '<')
		if i < 0 {
			return false
		}
		doc = doc[i+1:]
		switch {
		case bytes.HasPrefix(doc, []byte("dict>")), bytes.HasPrefix(doc, []byte("array>")):
			if depth++; depth > max {
				return true
			}
		case bytes.HasPrefix(doc, []byte("/dict>")), bytes.HasPrefix(doc, []byte("/array>")):
			depth--
		}
	}
}

// plistNum reads a number whichever way the plist wrote it (<integer> or
// <real>): powermetrics writes energies as integers and powers as reals, and
// that may change between releases.
func plistNum(d map[string]any, key string) (float64, bool) {
	var v float64
	switch x := d[key].(type) {
	case float64:
		v = x
	case float32:
		v = float64(x)
	case uint64:
		v = float64(x)
	case int64:
		v = float64(x)
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

func plistStr(d map[string]any, key string) string {
	s, _ := d[key].(string)
	return strings.TrimSpace(s)
}

// pmClusterType is the core type from a cluster name: the single letter
// before the cluster number and "-Cluster" ("E-Cluster", "P1-Cluster",
// "E0-Cluster", "M0-Cluster"), "" for any other shape.
func pmClusterType(name string) string {
	base, ok := strings.CutSuffix(name, "-Cluster")
	if !ok {
		return ""
	}
	base = strings.TrimRight(base, "0123456789")
	if len(base) != 1 || base[0] < 'A' || base[0] > 'Z' {
		return ""
	}
	return base
}

// pmBusy is active residency, 1 - idle_ratio, clamped to 0..1 because the
// ratio comes from counters read at slightly different instants.
func pmBusy(d map[string]any) *float64 {
	idle, ok := plistNum(d, "idle_ratio")
	if !ok {
		return nil
	}
	return Float(min(max(1-idle, 0), 1))
}

// pmMHz is freq_hz in MHz. powermetrics' frequency is the mean while active,
// so 0 means the core never ran: unknown, not 0 MHz.
func pmMHz(d map[string]any) *float64 {
	hz, ok := plistNum(d, "freq_hz")
	if !ok || hz <= 0 {
		return nil
	}
	return Float(hz / 1e6)
}

// pmPower is watts from powerKey (mean mW over the sample), or else from
// energyKey (mJ over the sample) divided by the interval.
func pmPower(proc map[string]any, powerKey, energyKey string, intervalNs int64) *float64 {
	if mw, ok := plistNum(proc, powerKey); ok && mw >= 0 {
		return Float(mw / 1e3)
	}
	if mj, ok := plistNum(proc, energyKey); ok && mj >= 0 && intervalNs > 0 {
		return Float(mj * 1e6 / float64(intervalNs))
	}
	return nil
}
