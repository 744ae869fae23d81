package agent

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPUInfoCaptured(t *testing.T) {
	b, err := os.ReadFile("../../testdata/proc/cpuinfo-linux-amd64-kvm")
	require.NoError(t, err)
	ci := parseCPUInfo(string(b))
	assert.Equal(t, "Intel(R) Xeon(R) Processor", ci.Model)
	assert.True(t, ci.Hypervisor, "captured in a Firecracker VM: the hypervisor flag is set")
	assert.Equal(t, 2, ci.Logical)
}

func TestParseCPUInfoArm64(t *testing.T) {
	ci := parseCPUInfo("processor\t: 0\nBogoMIPS\t: 48.00\nCPU implementer\t: 0x61\nCPU part\t: 0x023\n\nprocessor\t: 1\nCPU implementer\t: 0x61\n")
	assert.Equal(t, "arm64 implementer 0x61 part 0x023", ci.Model)
	assert.False(t, ci.Hypervisor)
	assert.Equal(t, 2, ci.Logical)
}

func TestParseMemTotal(t *testing.T) {
	b, err := os.ReadFile("../../testdata/proc/meminfo")
	require.NoError(t, err)
	n, err := parseMemTotal(string(b))
	require.NoError(t, err)
	assert.Greater(t, n, uint64(1<<30))
	_, err = parseMemTotal("MemFree: 1 kB\n")
	assert.ErrorContains(t, err, "no MemTotal")
	_, err = parseMemTotal("MemTotal: lots kB\n")
	assert.ErrorContains(t, err, "lots")
}

func TestParseCPUList(t *testing.T) {
	got, err := parseCPUList("0-3,8,10-11\n")
	require.NoError(t, err)
	assert.Equal(t, []uint32{0, 1, 2, 3, 8, 10, 11}, got)
	_, err = parseCPUList("3-1")
	assert.ErrorContains(t, err, "bad range")
	_, err = parseCPUList("x")
	assert.Error(t, err)
}

func TestLevelsByCapacity(t *testing.T) {
	levels := levelsByCapacity(map[int]uint32{0: 1024, 1: 1024, 2: 446, 3: 446, 4: 446})
	require.Len(t, levels, 2)
	assert.Equal(t, "performance (capacity 1024)", levels[0].GetName())
	assert.Equal(t, []uint32{0, 1}, levels[0].GetCpus())
	assert.Equal(t, "efficiency (capacity 446)", levels[1].GetName())
	assert.Equal(t, uint32(3), levels[1].GetLogicalCpus())

	homo := levelsByCapacity(map[int]uint32{0: 1024, 1: 1024})
	require.Len(t, homo, 1)
	assert.Equal(t, "capacity 1024", homo[0].GetName())
}

func TestOSReleaseName(t *testing.T) {
	assert.Equal(t, "Debian GNU/Linux 12 (bookworm)", osReleaseName("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"))
	assert.Equal(t, "", osReleaseName("NAME=x\n"))
}

// QEMU's arm64 virt machine says so in its device tree: the only sign of a
// VM an emulated arm64 guest has (no DMI, no hypervisor CPU flag or node).
func TestVirtualBoard(t *testing.T) {
	b, ok := virtualBoard([]byte("linux,dummy-virt\x00"))
	assert.True(t, ok)
	assert.Equal(t, "linux,dummy-virt (QEMU's virt machine)", b)
	_, ok = virtualBoard([]byte("raspberrypi,4-model-b\x00brcm,bcm2711\x00"))
	assert.False(t, ok, "a real board")
}
