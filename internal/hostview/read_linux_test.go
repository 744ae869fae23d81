package hostview

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtures = "testdata/proc-linux"

// fixtureReader reads the fixture trees, with USER_HZ 100 and the
// controller as pid 100, and a clock that moves 1 s between snapshots.
func fixtureReader() (*Reader, *time.Time) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	r := &Reader{self: 100, now: func() time.Time { return now }}
	r.sys.hz = 100
	return r, &now
}

// TestBetweenFixtureSnapshots reads a host before and after a cell run from
// fake /proc trees: the vCPU threads' run and wait, the hypervisor, the
// run's own processes (the controller and its descendants, a helper
// started in between among them), and the others: one with a name holding
// spaces and parentheses, one started in between, a pid reused, two ended
// and collected by their parent (counted under its name) and one whose
// time nobody collected (a note).
func TestBetweenFixtureSnapshots(t *testing.T) {
	// Two readers: a reader keeps each process's stat open, and two trees
	// are two hosts to it.
	r, now := fixtureReader()
	target := Target{PID: 101, VCPUTIDs: []int{102, 103}}
	r.root = filepath.Join(fixtures, "before")
	before := r.Snapshot(target)
	r.Close()
	*now = now.Add(time.Second)
	r.root = filepath.Join(fixtures, "after")
	after := r.Snapshot(target)
	r.Close()
	require.Empty(t, before.Notes)
	require.Empty(t, after.Notes)
	assert.Equal(t, wantFixtureUse, Between(before, after))
	assert.Empty(t, wantFixtureUse.Damage())
}

// overlay copies a fixture tree onto root, writing files in place so that
// a reader's open files see the new content, as they would in /proc, and
// removes the process directories the tree does not have.
func overlay(t *testing.T, tree, root string) {
	t.Helper()
	src := filepath.Join(fixtures, tree)
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	require.NoError(t, err)
	ents, err := os.ReadDir(filepath.Join(root, "proc"))
	require.NoError(t, err)
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(src, "proc", e.Name())); os.IsNotExist(err) {
			require.NoError(t, os.RemoveAll(filepath.Join(root, "proc", e.Name())))
		}
	}
}

// One reader over one tree that changes between its snapshots, as /proc
// does: the stat files it kept open read the new times, the new processes
// are opened, and the files of the processes gone are closed.
func TestSnapshotsReuseOpenFiles(t *testing.T) {
	r, now := fixtureReader()
	r.root = t.TempDir()
	target := Target{PID: 101, VCPUTIDs: []int{102, 103}}
	overlay(t, "before", r.root)
	before := r.Snapshot(target)
	require.Len(t, r.sys.procs, 11)
	kept := map[int]int{}
	for pid, f := range r.sys.procs {
		require.GreaterOrEqual(t, f.fd, 0, "pid %d", pid)
		kept[pid] = f.fd
	}
	overlay(t, "after", r.root)
	*now = now.Add(time.Second)
	after := r.Snapshot(target)
	assert.Equal(t, wantFixtureUse, Between(before, after))

	require.Len(t, r.sys.procs, 11)
	for _, pid := range []int{1, 50, 100, 101, 200, 800} {
		assert.Equal(t, kept[pid], r.sys.procs[pid].fd, "pid %d's file is read again, not opened again", pid)
	}
	for _, gone := range []int{300, 600} {
		assert.NotContains(t, r.sys.procs, gone)
	}
	r.Close()
	assert.Empty(t, r.sys.procs)
}

var wantFixtureUse = func() Use {
	const ms = int64(time.Millisecond)
	return Use{
		WallNs: 1000 * ms, HostCPUs: 2,
		VCPUs: []VCPU{
			{Index: 0, TID: 102, RunNs: 600 * ms, WaitNs: 300 * ms},
			{Index: 1, TID: 103, RunNs: 400 * ms, WaitNs: 250 * ms},
		},
		VM:       &Process{PID: 101, Name: "qemu-system-x86", CPUNs: 800 * ms},
		OwnCPUNs: (100 + 800 + 50) * ms, OtherCPUNs: (410 + 10 + 300 + 200 + 50 + 20) * ms,
		Processes: 11,
		Others: []Process{
			{PID: 1, Name: "systemd", CPUNs: 410 * ms},
			{PID: 200, Name: "cc1 (x) y", CPUNs: 300 * ms},
			{PID: 400, Name: "sh", CPUNs: 200 * ms},
			{PID: 500, Name: "newproc", CPUNs: 50 * ms},
			{PID: 800, Name: "cron", CPUNs: 20 * ms},
		},
		Notes: []string{"processes that ended between the reads without their parent collecting their CPU time: 1; what they used in the interval is not counted"},
	}
}()

func TestSnapshotOfAHostCellRunReadsNoVCPUs(t *testing.T) {
	r, _ := fixtureReader()
	r.root = filepath.Join(fixtures, "before")
	s := r.Snapshot(Target{})
	assert.Empty(t, s.VCPUs)
	assert.True(t, s.ProcsRead)
	assert.Len(t, s.Procs, 11)
	own := map[int]bool{}
	for _, p := range s.Procs {
		own[p.PID] = p.Own
	}
	assert.Equal(t, map[int]bool{1: false, 2: false, 50: false, 100: true, 101: true, 200: false, 300: false, 500: false, 600: false, 700: false, 800: false}, own)
}

// A vCPU thread that is gone, a /proc that is not there, a stat that does
// not parse: each is a note, and what they would give is not recorded.
func TestSnapshotNotes(t *testing.T) {
	r, now := fixtureReader()
	root := t.TempDir()
	r.root = root
	s := r.Snapshot(Target{PID: 101, VCPUTIDs: []int{102}})
	assert.False(t, s.ProcsRead)
	require.Len(t, s.VCPUs, 1)
	assert.False(t, s.VCPUs[0].OK)
	assert.Len(t, s.Notes, 2)
	assert.Contains(t, s.Notes[0], "vCPU thread 102 of process 101")
	assert.Contains(t, s.Notes[1], "processes not read")

	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc/7"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/7/stat"), []byte("7 (x) S 1 2\n"), 0o644))
	*now = now.Add(time.Second)
	s2 := r.Snapshot(Target{})
	assert.True(t, s2.ProcsRead)
	assert.Empty(t, s2.Procs)
	require.Len(t, s2.Notes, 1)
	assert.Contains(t, s2.Notes[0], "process 7: stat")
	u := Between(s, s2)
	assert.Zero(t, u.Processes, "processes read in one snapshot only: not recorded")
	assert.Empty(t, u.VCPUs)
}

// TestSnapshotOfThisHost reads this machine: the controller is the run's
// own, its parent is not, and what it sees is nothing damaged.
func TestSnapshotOfThisHost(t *testing.T) {
	r := NewReader()
	a := r.Snapshot(Target{})
	b := r.Snapshot(Target{})
	require.True(t, a.ProcsRead && b.ProcsRead, "notes: %v %v", a.Notes, b.Notes)
	u := Between(a, b)
	assert.Positive(t, u.Processes)
	assert.Positive(t, u.HostCPUs)
	assert.Empty(t, u.Damage())
	own := map[int]bool{}
	for _, p := range b.Procs {
		own[p.PID] = p.Own
	}
	mine, ok := own[os.Getpid()]
	require.True(t, ok, "this process is seen")
	assert.True(t, mine, "the controller is the run's own")
	if parent, ok := own[os.Getppid()]; ok {
		assert.False(t, parent, "its parent is not")
	}
}

// BenchmarkSnapshot is what one snapshot of this host costs: the runner
// takes two per cell run, outside its measured interval.
func BenchmarkSnapshot(b *testing.B) {
	r := NewReader()
	var tids []int
	if ents, err := os.ReadDir("/proc/self/task"); err == nil {
		for _, e := range ents[:min(2, len(ents))] {
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				tids = append(tids, tid)
			}
		}
	}
	target := Target{PID: os.Getpid(), VCPUTIDs: tids}
	r.Snapshot(target)
	b.ReportAllocs()
	procs := 0
	for b.Loop() {
		procs = len(r.Snapshot(target).Procs)
	}
	b.ReportMetric(float64(procs), "procs")
}
