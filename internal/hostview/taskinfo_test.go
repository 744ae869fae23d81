package hostview

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// procTaskInfo lays out a struct proc_taskinfo as XNU's <sys/proc_info.h>
// declares it, little-endian as on arm64 and x86_64, with every field set
// to a value of its own so that a wrong offset reads the wrong one.
func procTaskInfo(user, system uint64) []byte {
	b := make([]byte, 0, procTaskInfoSize)
	for _, v := range []uint64{
		1 << 40, // pti_virtual_size
		1 << 30, // pti_resident_size
		user,    // pti_total_user
		system,  // pti_total_system
		7,       // pti_threads_user
		8,       // pti_threads_system
	} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	// pti_policy, pti_faults, pti_pageins, pti_cow_faults,
	// pti_messages_sent, pti_messages_received, pti_syscalls_mach,
	// pti_syscalls_unix, pti_csw, pti_threadnum, pti_numrunning,
	// pti_priority.
	for i := int32(1); i <= 12; i++ {
		b = binary.LittleEndian.AppendUint32(b, uint32(100+i))
	}
	return b
}

func TestProcTaskInfoLayout(t *testing.T) {
	b := procTaskInfo(3, 4)
	require.Len(t, b, procTaskInfoSize, "6 uint64_t and 12 int32_t")
	assert.Equal(t, uint64(3), binary.LittleEndian.Uint64(b[ptiTotalUserOffset:]))
	assert.Equal(t, uint64(4), binary.LittleEndian.Uint64(b[ptiTotalSystemOffset:]))
}

func TestTaskCPUNs(t *testing.T) {
	appleSilicon := Timebase{Numer: 125, Denom: 3}
	intel := Timebase{Numer: 1, Denom: 1}
	tests := []struct {
		name         string
		user, system uint64
		tb           Timebase
		want         int64
	}{
		// 24 MHz ticks: 1.5 s of user time and 0.5 s of system time.
		{"Apple silicon", 36_000_000, 12_000_000, appleSilicon, 2_000_000_000},
		{"Apple silicon, a tick", 1, 0, appleSilicon, 41},
		{"Apple silicon, three ticks", 2, 1, appleSilicon, 125},
		{"Intel: nanoseconds already", 1_500_000_000, 500_000_000, intel, 2_000_000_000},
		{"nothing yet", 0, 0, appleSilicon, 0},
		// A year of CPU time in ticks: ticks*125 fits in 64 bits, but
		// 2^62 ticks would not; the conversion does not go through it.
		{"large", 1 << 62, 0, Timebase{Numer: 1, Denom: 1000}, (1 << 62) / 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TaskCPUNs(procTaskInfo(tt.user, tt.system), procTaskInfoSize, tt.tb)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTaskCPUNsRefuses(t *testing.T) {
	ok := Timebase{Numer: 125, Denom: 3}
	_, err := TaskCPUNs(procTaskInfo(1, 1), 0, ok)
	assert.EqualError(t, err, "proc_pidinfo PROC_PIDTASKINFO filled 0 bytes of 96: want 96, struct proc_taskinfo")
	_, err = TaskCPUNs(procTaskInfo(1, 1)[:40], 40, ok)
	assert.ErrorContains(t, err, "filled 40 bytes of 40: want 96")
	_, err = TaskCPUNs(procTaskInfo(1, 1), procTaskInfoSize, Timebase{Numer: 125})
	assert.EqualError(t, err, "mach_timebase_info 125/0: want a nonzero numerator and denominator")
	_, err = TaskCPUNs(procTaskInfo(1<<63, 1<<63), procTaskInfoSize, ok)
	assert.ErrorContains(t, err, "overflow")
	_, err = TaskCPUNs(procTaskInfo(1<<62, 0), procTaskInfoSize, ok)
	assert.ErrorContains(t, err, "overflow nanoseconds")
}
