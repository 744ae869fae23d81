package telemetry

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const procFixtures = "../../testdata/telemetry/proc-linux"

func readFixture(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(procFixtures, rel))
	require.NoError(t, err)
	return b
}

func TestParseProcStatCaptured(t *testing.T) {
	got, notes := parseProcStat(readFixture(t, "captured/proc/stat"), nil)
	assert.Empty(t, notes)
	// cpu0 362111 53 45178 327908 1483 0 1051 1151 2 0: guest (2) is
	// inside user already and must not be added again.
	assert.Equal(t, []procCPUTicks{
		{ID: 0, Idle: 327908 + 1483, Total: 362111 + 53 + 45178 + 327908 + 1483 + 0 + 1051 + 1151},
		{ID: 1, Idle: 340346 + 1128, Total: 352315 + 41 + 42414 + 340346 + 1128 + 0 + 1496 + 1166},
	}, got)

	next, notes := parseProcStat(readFixture(t, "captured-next/proc/stat"), got[len(got):])
	assert.Empty(t, notes)
	require.Len(t, next, 2)
	// 316 ms of a machine loaded on both CPUs: no idle tick in between.
	busy, ok := cpuBusy(got[0], next[0])
	require.True(t, ok)
	assert.Equal(t, 1.0, busy)
}

func TestParseProcStatGarbled(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        string
		want      []procCPUTicks
		wantNotes []string
	}{
		{name: "empty", in: ""},
		{name: "no cpu lines", in: "intr 1 2 3\nctxt 4\n"},
		{
			name: "old kernel, four counters",
			in:   "cpu  2 2 2 4\ncpu0 1 1 1 2\n",
			want: []procCPUTicks{{ID: 0, Idle: 2, Total: 5}},
		},
		{
			name:      "letters in a counter",
			in:        "cpu0 1 1 1 2 0 0 0 0\ncpu1 1 x 1 2 0 0 0 0\n",
			want:      []procCPUTicks{{ID: 0, Idle: 2, Total: 5}, {ID: 1, Garbled: true}},
			wantNotes: []string{`/proc/stat: garbled line "cpu1 1 x 1 2 0 0 0 0": cpu 1 has no busy share`},
		},
		{
			name:      "truncated mid-line",
			in:        "cpu0 1 1 1 2 0 0 0 0\ncpu1 10 2",
			want:      []procCPUTicks{{ID: 0, Idle: 2, Total: 5}, {ID: 1, Garbled: true}},
			wantNotes: []string{`/proc/stat: garbled line "cpu1 10 2": cpu 1 has no busy share`},
		},
		{
			name:      "no CPU number",
			in:        "cpuX 1 1 1 2\ncpu0 1 1 1 2\n",
			want:      []procCPUTicks{{ID: 0, Idle: 2, Total: 5}},
			wantNotes: []string{`/proc/stat: garbled line "cpuX 1 1 1 2" skipped`},
		},
		{
			name: "counter overflowing 64 bits",
			in:   "cpu0 99999999999999999999 1 1 2\n",
			want: []procCPUTicks{{ID: 0, Garbled: true}},
			wantNotes: []string{
				`/proc/stat: garbled line "cpu0 99999999999999999999 1 1 2": cpu 0 has no busy share`,
			},
		},
		{name: "binary junk", in: "\x00\xff\x01cpu\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, notes := parseProcStat([]byte(tc.in), nil)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.wantNotes, notes)
		})
	}
}

func TestCPUBusy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		prev, cur procCPUTicks
		want      float64
		wantOK    bool
	}{
		{"quarter busy", procCPUTicks{Idle: 100, Total: 200}, procCPUTicks{Idle: 130, Total: 240}, 0.25, true},
		{"idle", procCPUTicks{Idle: 100, Total: 200}, procCPUTicks{Idle: 110, Total: 210}, 0, true},
		{"no tick passed", procCPUTicks{Idle: 100, Total: 200}, procCPUTicks{Idle: 100, Total: 200}, 0, false},
		// iowait going backwards must not make busy exceed 1 or go
		// negative.
		{"idle went backwards", procCPUTicks{Idle: 100, Total: 200}, procCPUTicks{Idle: 95, Total: 210}, 1, true},
		{"idle ahead of total", procCPUTicks{Idle: 100, Total: 200}, procCPUTicks{Idle: 150, Total: 210}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := cpuBusy(tc.prev, tc.cur)
			assert.Equal(t, tc.wantOK, ok)
			assert.InDelta(t, tc.want, got, 1e-12)
		})
	}
}

func TestParseTaskStat(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    procTaskStat
	}{
		// Captured: a bash spinner, 20 ticks of user time, last on CPU 1.
		{"captured/proc/25994/task/25994/stat", procTaskStat{State: 'R', Ticks: 20, Nice: 0, Processor: 1, Policy: schedOther}},
		{"captured-next/proc/25994/task/25994/stat", procTaskStat{State: 'R', Ticks: 29, Nice: 0, Processor: 1, Policy: schedOther}},
		// QEMU's vCPU thread names hold a space and a slash.
		{"constructed/proc/4242/task/4250/stat", procTaskStat{State: 'R', Ticks: 520, Processor: 1, Policy: schedOther}},
		{"constructed/proc/4242/task/4251/stat", procTaskStat{State: 'S', Ticks: 50, Processor: 3, Policy: schedIdle}},
		// A name with ") (" inside: fields count from the last ')'.
		{"constructed/proc/4242/task/4252/stat", procTaskStat{State: 'S', Ticks: 100, Processor: 2, RTPrio: 10, Policy: schedFIFO}},
		{"constructed-next/proc/4242/task/4251/stat", procTaskStat{State: 'Z', Ticks: 50, Processor: 3, Policy: schedIdle}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			got, err := parseTaskStat(readFixture(t, tc.fixture))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	st, err := parseTaskStat([]byte(taskStatLine("S", "3", "4", "19", "5", "0", "3")))
	require.NoError(t, err)
	assert.Equal(t, procTaskStat{State: 'S', Ticks: 7, Nice: 19, Processor: 5, Policy: schedBatch}, st)
	st, err = parseTaskStat([]byte(taskStatLine("R", "0", "0", "-20", "0", "0", "0")))
	require.NoError(t, err)
	assert.Equal(t, -20, st.Nice)
}

// taskStatLine is a task stat line of thread 7, "w", with the fields the
// parser reads set and 1 in the others.
func taskStatLine(state, utime, stime, nice, processor, rtprio, policy string) string {
	f := make([]string, 52)
	for i := range f {
		f[i] = "1"
	}
	f[0], f[1], f[2] = "7", "(w)", state
	f[13], f[14], f[18] = utime, stime, nice
	f[38], f[39], f[40] = processor, rtprio, policy
	return strings.Join(f, " ")
}

func TestParseTaskStatErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"no name", "7 w S 1 2 3", "no ')'"},
		{"cut short", taskStatLine("S", "3", "4", "0", "0", "0", "0")[:30], "fields, want at least 41"},
		{"letters in utime", taskStatLine("S", "x", "4", "0", "0", "0", "0"), `field 14 is "x"`},
		{"letters in policy", taskStatLine("S", "3", "4", "0", "0", "0", "FIFO"), `field 41 is "FIFO"`},
		{"long state", taskStatLine("SS", "3", "4", "0", "0", "0", "0"), `field 3 is "SS"`},
		{"empty", "", "no ')'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTaskStat([]byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseSchedstat(t *testing.T) {
	ns, err := parseSchedstat(readFixture(t, "constructed/proc/4242/task/4250/schedstat"))
	require.NoError(t, err)
	assert.Equal(t, uint64(5200000000), ns)
	_, err = parseSchedstat([]byte("\n"))
	assert.Error(t, err)
}

func TestSchedPolicyString(t *testing.T) {
	for _, tc := range []struct {
		policy, nice, rtprio int
		want                 string
	}{
		{schedOther, 0, 0, "SCHED_OTHER nice=0"},
		{schedOther, -10, 0, "SCHED_OTHER nice=-10"},
		{schedBatch, 10, 0, "SCHED_BATCH nice=10"},
		{schedIdle, 0, 0, "SCHED_IDLE nice=0"},
		{schedFIFO, 0, 10, "SCHED_FIFO rtprio=10 nice=0"},
		{schedRR, 0, 99, "SCHED_RR rtprio=99 nice=0"},
		{schedDeadline, 0, 0, "SCHED_DEADLINE nice=0"},
		{schedExt, 0, 0, "SCHED_EXT nice=0"},
		{4, 0, 0, "policy(4) nice=0"},
	} {
		assert.Equal(t, tc.want, schedPolicyString(tc.policy, tc.nice, tc.rtprio))
	}
}

func TestParseKHzAsMHz(t *testing.T) {
	mhz, err := parseKHzAsMHz(readFixture(t, "constructed/sys/devices/system/cpu/cpu2/cpufreq/scaling_cur_freq"))
	require.NoError(t, err)
	assert.Equal(t, 3400.0, mhz)
	mhz, err = parseKHzAsMHz([]byte("2400500\n"))
	require.NoError(t, err)
	assert.Equal(t, 2400.5, mhz)
	_, err = parseKHzAsMHz([]byte("<unknown>\n"))
	assert.Error(t, err)
}

func TestParseUintFile(t *testing.T) {
	v, err := parseUintFile(readFixture(t, "constructed/sys/class/powercap/intel-rapl:0/max_energy_range_uj"))
	require.NoError(t, err)
	assert.Equal(t, uint64(262143328850), v)
	for _, bad := range []string{"", "\n", "12 13\n", "-1\n", "1.5\n"} {
		_, err := parseUintFile([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func TestEnergyDelta(t *testing.T) {
	const rng = 262143328850
	for _, tc := range []struct {
		name          string
		prev, cur     uint64
		maxRange      uint64
		want          uint64
		wantWrapped   bool
		wantBackwards bool
	}{
		{name: "counting up", prev: 1000, cur: 1500, maxRange: rng, want: 500},
		{name: "still", prev: 1000, cur: 1000, maxRange: rng, want: 0},
		{name: "wrapped", prev: rng - 328850, cur: 671150, maxRange: rng, want: 1000000, wantWrapped: true},
		{name: "wrapped at zero", prev: rng, cur: 0, maxRange: rng, want: 0, wantWrapped: true},
		{name: "backwards, range unknown", prev: 1000, cur: 10, wantBackwards: true},
		{name: "backwards past the range", prev: rng + 5, cur: 10, maxRange: rng, wantBackwards: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, wrapped, err := energyDelta(tc.prev, tc.cur, tc.maxRange)
			if tc.wantBackwards {
				assert.ErrorIs(t, err, errEnergyBackwards)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.wantWrapped, wrapped)
		})
	}
}

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: "0-7,16\n", want: []int{0, 1, 2, 3, 4, 5, 6, 7, 16}},
		{in: "0\n", want: []int{0}},
		{in: "0-1", want: []int{0, 1}},
		{in: "0,2-3,5", want: []int{0, 2, 3, 5}},
		{in: "\n"},
		{in: "3-1", wantErr: `bad range "3-1"`},
		{in: "a-b", wantErr: `"a" is not a CPU number`},
		{in: "0,,1", wantErr: `"" is not a CPU number`},
		{in: "-1", wantErr: `"" is not a CPU number`},
		{in: "0-4000000000", wantErr: "out of range"},
		{in: "0-99999", wantErr: "out of range"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseCPUList(tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCoreTypes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		pCPUs, eCPUs []int
		capacity     map[int]uint64
		want         map[int]string
	}{
		{
			name:  "Intel hybrid",
			pCPUs: []int{0, 1}, eCPUs: []int{2, 3},
			capacity: map[int]uint64{0: 1024, 1: 1024, 2: 1024, 3: 1024},
			want:     map[int]string{0: "P", 1: "P", 2: "E", 3: "E"},
		},
		{
			name:     "big.LITTLE capacities",
			capacity: map[int]uint64{0: 446, 1: 446, 2: 1024, 3: 1024},
			want:     map[int]string{0: "capacity 446", 1: "capacity 446", 2: "capacity 1024", 3: "capacity 1024"},
		},
		{name: "all alike", capacity: map[int]uint64{0: 1024, 1: 1024}},
		{name: "one CPU", capacity: map[int]uint64{0: 1024}},
		{name: "nothing known"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, coreTypes(tc.pCPUs, tc.eCPUs, tc.capacity))
		})
	}
}

func TestParseAuxvClockTicks(t *testing.T) {
	auxv := func(wordSize int, order binary.AppendByteOrder, pairs ...uint64) []byte {
		var b []byte
		for _, v := range pairs {
			if wordSize == 4 {
				b = order.AppendUint32(b, uint32(v))
			} else {
				b = order.AppendUint64(b, v)
			}
		}
		return b
	}
	for _, tc := range []struct {
		name     string
		wordSize int
		order    binary.ByteOrder
		b        []byte
		want     int
		wantOK   bool
	}{
		{"64-bit", 8, binary.LittleEndian, auxv(8, binary.LittleEndian, 33, 1, 6, 4096, 17, 100, 0, 0), 100, true},
		{"32-bit big-endian", 4, binary.BigEndian, auxv(4, binary.BigEndian, 6, 4096, 17, 250, 0, 0), 250, true},
		{"absent", 8, binary.LittleEndian, auxv(8, binary.LittleEndian, 6, 4096, 0, 0), 0, false},
		{"after AT_NULL", 8, binary.LittleEndian, auxv(8, binary.LittleEndian, 0, 0, 17, 100), 0, false},
		{"truncated", 8, binary.LittleEndian, auxv(8, binary.LittleEndian, 17)[:8], 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseAuxvClockTicks(tc.b, tc.wordSize, tc.order)
			assert.Equal(t, tc.wantOK, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestVCPURefs(t *testing.T) {
	assert.Equal(t, []ThreadRef{{PID: 4242, TID: 4250, Role: "vcpu 0"}, {PID: 4242, TID: 4251, Role: "vcpu 1"}},
		VCPURefs(4242, []int{4250, 4251}))
	assert.Empty(t, VCPURefs(4242, nil))
}

// FuzzParseProcStat checks that no /proc/stat text, however garbled, panics
// the parser or yields a busy share outside 0..1.
func FuzzParseProcStat(f *testing.F) {
	for _, fx := range []string{"captured/proc/stat", "captured-next/proc/stat", "constructed/proc/stat"} {
		b, err := os.ReadFile(filepath.Join(procFixtures, fx))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("cpu0 1 x\ncpu1 2 3 4 5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _ := parseProcStat(b, nil)
		for _, c := range got {
			if busy, ok := cpuBusy(procCPUTicks{}, c); ok && (busy < 0 || busy > 1) {
				t.Fatalf("cpu %d busy %v", c.ID, busy)
			}
		}
	})
}

// FuzzParseTaskStat checks that no task stat text panics the parser.
func FuzzParseTaskStat(f *testing.F) {
	for _, fx := range []string{"captured/proc/25994/task/25994/stat", "constructed/proc/4242/task/4252/stat"} {
		b, err := os.ReadFile(filepath.Join(procFixtures, fx))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseTaskStat(b)
	})
}
