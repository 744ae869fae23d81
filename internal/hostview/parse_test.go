package hostview

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProcStat(t *testing.T) {
	tail := " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	for _, tc := range []struct {
		name, line string
		want       procStat
		err        string
	}{
		{name: "plain", line: "4242 (qemu-system-x86) S 17 4242 4242 0 -1 4194560 9 0 0 0 1500 250 30 12 20 0 5 0 123456 1 2" + tail,
			want: procStat{Comm: []byte("qemu-system-x86"), PPID: 17, Ticks: 1750, ChildTicks: 42, Start: 123456}},
		{name: "a name with spaces and parentheses", line: "9 (a) b (c) R 1 9 9 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 99 1 2" + tail,
			want: procStat{Comm: []byte("a) b (c"), PPID: 1, Ticks: 10, Start: 99}},
		{name: "no parentheses", line: "9 a R 1", err: "no name in parentheses"},
		{name: "too few fields", line: "9 (a) R 1 9 9 0 -1 0 0 0 0 0 7 3", err: "15 fields, want at least 22"},
		{name: "a garbled utime", line: "9 (a) R 1 9 9 0 -1 0 0 0 0 0 x 3 0 0 20 0 1 0 99" + tail, err: `field 14 is "x"`},
		{name: "a negative ppid", line: "9 (a) R -1 9 9 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 99" + tail, err: `field 4 is "-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tc.line))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseSchedstat(t *testing.T) {
	run, wait, err := parseSchedstat([]byte("1600000000 500000000 800\n"))
	require.NoError(t, err)
	assert.Equal(t, []int64{1600000000, 500000000}, []int64{run, wait})
	for _, bad := range []string{"", "12\n", "12 x 3\n", "-1 2 3\n"} {
		_, _, err := parseSchedstat([]byte(bad))
		assert.ErrorContains(t, err, "want the run and wait times", "%q", bad)
	}
}

func TestCountCPUList(t *testing.T) {
	for s, want := range map[string]int{"0\n": 1, "0-1\n": 2, "0-7,16": 9, "0,2,4-5": 4} {
		n, err := countCPUList(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, n, s)
	}
	for _, bad := range []string{"", "x", "3-1", "0-99999"} {
		_, err := countCPUList(bad)
		assert.Error(t, err, bad)
	}
}

func TestMarkOwn(t *testing.T) {
	procs := []ProcTimes{{PID: 1}, {PID: 10, PPID: 1}, {PID: 11, PPID: 10}, {PID: 12, PPID: 11}, {PID: 20, PPID: 1},
		{PID: 30, PPID: 31}, {PID: 31, PPID: 30}} // a cycle, as only a garbled table has
	markOwn(procs, 10)
	own := map[int]bool{}
	for _, p := range procs {
		own[p.PID] = p.Own
	}
	assert.Equal(t, map[int]bool{1: false, 10: true, 11: true, 12: true, 20: false, 30: false, 31: false}, own)
}

func TestBetween(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const ms = int64(time.Millisecond)
	snap := func(at time.Duration, vcpus []ThreadTimes, procs ...ProcTimes) Snapshot {
		return Snapshot{At: t0.Add(at), HostCPUs: 2, VCPUs: vcpus, Procs: procs, ProcsRead: true}
	}
	for _, tc := range []struct {
		name          string
		before, after Snapshot
		want          Use
	}{
		{name: "a process under 1% of a CPU is not named, at 1% it is",
			before: snap(0, nil, ProcTimes{PID: 5, Name: "a"}, ProcTimes{PID: 6, Name: "b"}),
			after:  snap(time.Second, nil, ProcTimes{PID: 5, Name: "a", SelfNs: 9 * ms}, ProcTimes{PID: 6, Name: "b", SelfNs: 10 * ms}),
			want: Use{WallNs: 1000 * ms, HostCPUs: 2, OtherCPUNs: 19 * ms, Processes: 2,
				Others: []Process{{PID: 6, Name: "b", CPUNs: 10 * ms}}}},
		{name: "the run's own are not others",
			before: snap(0, nil, ProcTimes{PID: 5, Name: "qoslab", Own: true}),
			after:  snap(time.Second, nil, ProcTimes{PID: 5, Name: "qoslab", SelfNs: 500 * ms, Own: true}),
			want:   Use{WallNs: 1000 * ms, HostCPUs: 2, OwnCPUNs: 500 * ms, Processes: 1}},
		{name: "processes read in one snapshot only are not recorded",
			before: Snapshot{At: t0, HostCPUs: 2, Notes: []string{"processes not read: x"}},
			after:  snap(time.Second, nil, ProcTimes{PID: 5, SelfNs: 500 * ms}),
			want:   Use{WallNs: 1000 * ms, HostCPUs: 2, Notes: []string{"processes not read: x"}}},
		{name: "a vCPU not read leaves all out",
			before: snap(0, []ThreadTimes{{TID: 7, OK: true}, {TID: 8}}),
			after:  snap(time.Second, []ThreadTimes{{TID: 7, RunNs: 5, OK: true}, {TID: 8, RunNs: 5, OK: true}}),
			want: Use{WallNs: 1000 * ms, HostCPUs: 2,
				Notes: []string{"vCPU 1 (thread 8) not read: the vCPU threads' times are not recorded"}}},
		{name: "a vCPU's times going backwards leave all out",
			before: snap(0, []ThreadTimes{{TID: 7, RunNs: 9, OK: true}}),
			after:  snap(time.Second, []ThreadTimes{{TID: 7, RunNs: 5, OK: true}}),
			want: Use{WallNs: 1000 * ms, HostCPUs: 2,
				Notes: []string{"vCPU 0 (thread 7): its times went backwards: the vCPU threads' times are not recorded"}}},
		{name: "the same note in both reads is given once",
			before: Snapshot{At: t0, Notes: []string{"n"}},
			after:  Snapshot{At: t0.Add(time.Second), Notes: []string{"n", "m"}},
			want:   Use{WallNs: 1000 * ms, Notes: []string{"n", "m"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Between(tc.before, tc.after))
		})
	}
}

func TestDamage(t *testing.T) {
	const s = int64(time.Second)
	good := Use{WallNs: s, HostCPUs: 2, VCPUs: []VCPU{{RunNs: s, WaitNs: s / 2}}, VM: &Process{CPUNs: s},
		OwnCPUNs: s, OtherCPUNs: s, Processes: 9, Others: []Process{{PID: 3, CPUNs: s / 2}}}
	assert.Empty(t, good.Damage())
	for _, tc := range []struct {
		name string
		edit func(u *Use)
		why  string
	}{
		{"negative wall", func(u *Use) { u.WallNs = -1 }, "wall_ns is negative"},
		{"negative other", func(u *Use) { u.OtherCPUNs = -5 }, "other_cpu_ns is negative (-5)"},
		{"negative wait", func(u *Use) { u.VCPUs[0].WaitNs = -1 }, "vCPU 0 wait_ns is negative"},
		{"a vCPU within the tolerance", func(u *Use) { u.VCPUs[0].RunNs = s + s/100 + VCPUSlackNs }, ""},
		{"a vCPU ran longer than the interval", func(u *Use) { u.VCPUs[0].RunNs = s + s/100 + VCPUSlackNs + 1 }, "vCPU 0 ran 1020000001 ns"},
		{"more CPU time than the host had", func(u *Use) { u.OtherCPUNs = 2*s + CPUSlackNs }, "more than 2 CPUs had"},
		{"the named others more than all others", func(u *Use) { u.Others[0].CPUNs = 2 * s }, "more than all other work's"},
		{"the hypervisor more than the run's own", func(u *Use) { u.VM.CPUNs = 2 * s }, "more than the run's own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := good
			u.VCPUs = append([]VCPU(nil), good.VCPUs...)
			u.Others = append([]Process(nil), good.Others...)
			vm := *good.VM
			u.VM = &vm
			tc.edit(&u)
			if tc.why == "" {
				assert.Empty(t, u.Damage())
			} else {
				assert.Contains(t, u.Damage(), tc.why)
			}
		})
	}
}

func TestRecordable(t *testing.T) {
	good := Use{WallNs: 1e9, HostCPUs: 2, OtherCPUNs: 5e8, Processes: 3, Notes: []string{"n"}}
	assert.Equal(t, good, good.Recordable())
	bad := good
	bad.OtherCPUNs = -1
	assert.Equal(t, Use{WallNs: 1e9, HostCPUs: 2, Notes: []string{"n", "the host's processes were not recorded: other_cpu_ns is negative (-1)"}}, bad.Recordable())
	assert.Empty(t, bad.Recordable().Damage())
	assert.Equal(t, []string{"n"}, bad.Notes, "the damaged view's notes are left alone")

	// A process table that does not add up costs the processes, never the
	// vCPU threads' exact times beside it.
	vcpus := []VCPU{{Index: 0, TID: 7, RunNs: 4e8, WaitNs: 1e8}}
	overfull := Use{WallNs: 1e9, HostCPUs: 2, VCPUs: vcpus, OwnCPUNs: 6e9, OtherCPUNs: 3e9, Processes: 80, VM: &Process{PID: 9, CPUNs: 5e8}}
	kept := overfull.Recordable()
	assert.Equal(t, vcpus, kept.VCPUs)
	assert.Zero(t, kept.Processes, "processes not recorded")
	assert.Nil(t, kept.VM)
	assert.Contains(t, kept.Notes[0], "the host's processes were not recorded: own and other CPU time 9000000000 ns is more than 2 CPUs had")
	assert.Empty(t, kept.Damage())

	// A vCPU that ran longer than the interval: nothing but the interval.
	badVCPU := overfull
	badVCPU.VCPUs = []VCPU{{Index: 0, TID: 7, RunNs: 3e9}}
	assert.Equal(t, Use{WallNs: 1e9, HostCPUs: 2, Notes: []string{"the host's view was not recorded: " + badVCPU.Damage()}}, badVCPU.Recordable())
}

// A process that ended between the reads after its parent did was handed
// to init, which collected it: its time before the first read comes off
// init's collected children's time, not counted as other work in the
// interval.
func TestBetweenEndedProcessCollectedByInit(t *testing.T) {
	t0 := time.Unix(100, 0)
	before := Snapshot{At: t0, HostCPUs: 2, ProcsRead: true, Procs: []ProcTimes{
		{PID: 1, Start: 1, Name: "init", SelfNs: 1e9, ChildNs: 50e9},
		{PID: 200, PPID: 1, Start: 10, Name: "sh", SelfNs: 1e8},
		{PID: 300, PPID: 200, Start: 20, Name: "compile", SelfNs: 20e9},
	}}
	after := Snapshot{At: t0.Add(time.Second), HostCPUs: 2, ProcsRead: true, Procs: []ProcTimes{
		// sh ended (collected by init), then compile (handed to init,
		// collected by it): init's children's time grew by both, with
		// compile's 0.5 s in the interval.
		{PID: 1, Start: 1, Name: "init", SelfNs: 1e9, ChildNs: 50e9 + 1e8 + 20.5e9},
	}}
	u := Between(before, after)
	assert.Equal(t, int64(5e8), u.OtherCPUNs, "compile's half second in the interval, under init's name")
	assert.Empty(t, u.Notes)
	assert.Empty(t, u.Damage())
}

// A VM process read alone (macOS: the service process, no process table)
// gives the VM's CPU time in the interval and nothing of own or other work.
func TestBetweenVMProcessAlone(t *testing.T) {
	t0 := time.Unix(100, 0)
	before := Snapshot{At: t0, HostCPUs: 8, VMPID: 42, VMNs: 5e9, VMRead: true}
	after := Snapshot{At: t0.Add(time.Second), HostCPUs: 8, VMPID: 42, VMNs: 6.5e9, VMRead: true}
	u := Between(before, after)
	require.NotNil(t, u.VM)
	assert.Equal(t, Process{PID: 42, Name: "VM service", CPUNs: 1.5e9}, *u.VM)
	assert.Zero(t, u.Processes, "no process table was read: own and other work are not recorded")
	assert.Empty(t, u.Damage())

	after.VMRead = false
	assert.Nil(t, Between(before, after).VM, "a VM process read once has no interval")
}
