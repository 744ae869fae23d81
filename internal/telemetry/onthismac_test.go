package telemetry

import (
	"bufio"
	"bytes"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The perf-level parser on this Mac's own `sysctl hw`, as powermetrics
// telemetry reads it (readPerfLevels): every level named and typed, and
// their logical CPUs adding up to hw.logicalcpu from the same output.
// TestParseSysctlPerfLevels covers the parser's cases on every OS.
func TestPerfLevelsOnThisMac(t *testing.T) {
	if runtime.GOOS != "darwin" {
		t.Skip("hw.perflevel sysctls are macOS's (12 and later): CI's hosted macOS job runs this on its real output")
	}
	out, err := exec.Command("/usr/sbin/sysctl", "hw").Output()
	require.NoError(t, err)
	var shown []string
	logical := -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		key, value, ok := splitSysctlLine(sc.Text())
		if !ok {
			continue
		}
		if strings.Contains(key, "perflevel") || key == "hw.logicalcpu" || key == "hw.physicalcpu" {
			shown = append(shown, sc.Text())
		}
		if key == "hw.logicalcpu" {
			logical, err = strconv.Atoi(value)
			require.NoError(t, err, sc.Text())
		}
	}
	t.Logf("sysctl hw, the keys read:\n%s", strings.Join(shown, "\n"))
	if !bytes.Contains(out, []byte("hw.perflevel")) {
		t.Skipf("this Mac reports no perf levels (%s, %s): before macOS 12, or a VM that hides them; powermetrics telemetry then notes it", runtime.GOARCH, strings.Join(shown, "; "))
	}
	levels, err := parseSysctlPerfLevels(out)
	require.NoError(t, err)
	require.Positive(t, logical, "hw.logicalcpu")
	sum := 0
	for _, l := range levels {
		t.Logf("perf level %d: %s (type %s), %d logical CPUs", l.Level, l.Name, l.Type(), l.LogicalCPUs)
		assert.NotEmpty(t, l.Type(), "level %d", l.Level)
		sum += l.LogicalCPUs
	}
	assert.Equal(t, logical, sum, "the levels' logical CPUs are all of them")
}
