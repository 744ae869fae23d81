package hostview

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Target says what of a cell run's machine the host reads besides its
// processes: the hypervisor's process and its vCPU threads, in vCPU order.
// The zero Target is a host cell run's.
type Target struct {
	PID      int
	VCPUTIDs []int
}

// Snapshot is one read of the host. Between turns two into a Use.
type Snapshot struct {
	// At is when the vCPU threads were read (monotonic).
	At       time.Time
	HostCPUs int
	// VMPID is the hypervisor's pid (Target.PID); 0 for none.
	VMPID int
	// VCPUs are the vCPU threads asked for, in vCPU order; a thread that
	// could not be read is there with OK false.
	VCPUs []ThreadTimes
	// Procs are every process seen, in pid order; ProcsRead is false
	// when the process table could not be read at all.
	Procs     []ProcTimes
	ProcsRead bool
	// VMNs is the hypervisor's process's CPU time, where it was read alone
	// (VMRead: on macOS, where the process table is not walked).
	VMNs   int64
	VMRead bool
	Notes  []string
}

// ThreadTimes is one vCPU thread's scheduler times since it started.
type ThreadTimes struct {
	TID           int
	RunNs, WaitNs int64
	OK            bool
}

// ProcTimes is one process's CPU time since it started.
type ProcTimes struct {
	PID, PPID int
	// Start is the process's start time in ticks since boot: a pid seen
	// in both reads with another start is another process.
	Start uint64
	Name  string
	// SelfNs is the CPU time of the process's threads, live and ended;
	// ChildNs that of its children it has waited for (the kernel adds a
	// child's CPU time, its own children's included, to its parent's when
	// the parent collects it).
	SelfNs, ChildNs int64
	// Own is set when the process is the controller or one of its
	// descendants (the run's own: agent, spinners, hypervisor).
	Own bool
}

// OthersMax is how many other processes a Use names, and OthersMinShare the
// share of one CPU over the interval a process must have taken to be named.
const (
	OthersMax      = 5
	OthersMinShare = 0.01
)

// markOwn sets Own on self and every process whose parent chain leads to
// it, as the chain stood when the processes were read.
func markOwn(procs []ProcTimes, self int) {
	parent := make(map[int]int, len(procs))
	for _, p := range procs {
		parent[p.PID] = p.PPID
	}
	own := map[int]bool{}
	for i := range procs {
		// Walk up at most len(procs) steps: a garbled table can hold a
		// cycle.
		pid, mine := procs[i].PID, false
		for n := 0; pid > 0 && n <= len(procs); n++ {
			if pid == self {
				mine = true
				break
			}
			if known, ok := own[pid]; ok {
				mine = known
				break
			}
			next, ok := parent[pid]
			if !ok {
				break
			}
			pid = next
		}
		own[procs[i].PID] = mine
		procs[i].Own = mine
	}
}

// Between is the host's view of the interval between two snapshots of the
// same Target, before and after. Each process counts its CPU time between
// the reads; one that started between them counts all of its own. One that
// ended between them was collected by its parent, whose children's time
// then holds all of it: its share before the first read is taken off the
// parent's, so that it counts what it used in the interval, under its
// parent's name. Where that does not add up (a parent that let the kernel
// reap its children), what is lost is said in a note.
func Between(before, after Snapshot) Use {
	u := Use{WallNs: after.At.Sub(before.At).Nanoseconds(), HostCPUs: after.HostCPUs}
	u.Notes = appendNew(u.Notes, before.Notes...)
	u.Notes = appendNew(u.Notes, after.Notes...)
	u.VCPUs, u.Notes = vcpusBetween(before.VCPUs, after.VCPUs, u.Notes)
	if before.VMRead && after.VMRead && before.VMPID == after.VMPID && after.VMNs >= before.VMNs {
		u.VM = &Process{PID: after.VMPID, Name: "VM service", CPUNs: after.VMNs - before.VMNs}
	}
	if !before.ProcsRead || !after.ProcsRead {
		return u
	}
	pu := newProcUses(before, after)
	// Ended processes are taken in pid order (the snapshots' order), so
	// that which of a parent's children it is found to have collected does
	// not depend on how /proc was listed.
	lost := 0
	for i := range before.Procs {
		q := &before.Procs[i]
		if j, ok := pu.cur[q.PID]; ok && pu.uses[j].p.Start == q.Start {
			continue
		}
		// q ended: its time before the first read is in the children's
		// time of whoever collected it: its parent, or, where the parent
		// ended first, the ancestor it was handed to (a subreaper, or init):
		// its ancestors as they stood at the first read, nearest first.
		had := q.SelfNs + q.ChildNs
		if j, ok := pu.reaper(q, had); ok {
			pu.uses[j].ns -= had
			pu.uses[j].collected -= had
			continue
		}
		lost++
	}
	u.Processes = len(after.Procs)
	pu.sum(&u, after.VMPID)
	// What an ended process nobody collected used after the first read
	// is in no process's time.
	if lost > 0 {
		u.Notes = append(u.Notes, fmt.Sprintf("processes that ended between the reads without their parent collecting their CPU time: %d; what they used in the interval is not counted", lost))
	}
	return u
}

// procUse is one process's CPU time between two snapshots: ns is its CPU
// time in the interval; collected what its children's time grew by and no
// ended child has claimed.
type procUse struct {
	p             *ProcTimes
	ns, collected int64
}

// procUses are every process of the second snapshot with its use, and
// what the first snapshot knew of each pid.
type procUses struct {
	before []ProcTimes
	prev   map[int]*ProcTimes // pid -> the process at the first read
	prevAt map[int]int        // pid -> its index in before
	uses   []procUse
	cur    map[int]int // pid -> index in uses
}

func newProcUses(before, after Snapshot) *procUses {
	pu := &procUses{before: before.Procs, prev: make(map[int]*ProcTimes, len(before.Procs)), prevAt: make(map[int]int, len(before.Procs)),
		uses: make([]procUse, len(after.Procs)), cur: make(map[int]int, len(after.Procs))}
	for i := range before.Procs {
		pu.prev[before.Procs[i].PID] = &before.Procs[i]
		pu.prevAt[before.Procs[i].PID] = i
	}
	for i := range after.Procs {
		p := &after.Procs[i]
		x := procUse{p: p, ns: p.SelfNs + p.ChildNs, collected: p.ChildNs}
		if q := pu.prev[p.PID]; q != nil && q.Start == p.Start {
			x.ns -= q.SelfNs + q.ChildNs
			x.collected -= q.ChildNs
		}
		pu.uses[i] = x
		pu.cur[p.PID] = i
	}
	return pu
}

// reaper finds who collected the ended process q, whose CPU time before
// the first read was had: the nearest of its ancestors at the first read
// (its parent first), then init, that is still the same process and whose
// collected children's time grew by at least had; its index in uses.
func (pu *procUses) reaper(q *ProcTimes, had int64) (int, bool) {
	seen := map[int]bool{}
	for pid := q.PPID; ; {
		if pid <= 0 || seen[pid] {
			pid = 1
		}
		seen[pid] = true
		if j, ok := pu.cur[pid]; ok && pu.uses[j].collected >= had {
			if p := pu.prev[pid]; p == nil || p.Start == pu.uses[j].p.Start {
				return j, true
			}
		}
		if pid == 1 {
			return 0, false
		}
		i, ok := pu.prevAt[pid]
		if !ok {
			pid = 1
			continue
		}
		pid = pu.before[i].PPID
	}
}

// sum adds the processes' uses to u: own and other CPU time, the
// hypervisor's process (vmPID), and the largest others.
func (pu *procUses) sum(u *Use, vmPID int) {
	minNs := int64(OthersMinShare * float64(u.WallNs))
	for _, x := range pu.uses {
		ns := max(x.ns, 0)
		if x.p.Own {
			u.OwnCPUNs += ns
		} else {
			u.OtherCPUNs += ns
		}
		if x.p.PID == vmPID && vmPID > 0 {
			u.VM = &Process{PID: x.p.PID, Name: x.p.Name, CPUNs: ns}
		}
		if !x.p.Own && x.ns > 0 && x.ns >= minNs {
			u.Others = append(u.Others, Process{PID: x.p.PID, Name: x.p.Name, CPUNs: x.ns})
		}
	}
	slices.SortFunc(u.Others, func(a, b Process) int {
		return cmp.Or(cmp.Compare(b.CPUNs, a.CPUNs), cmp.Compare(a.PID, b.PID))
	})
	if len(u.Others) > OthersMax {
		u.Others = u.Others[:OthersMax]
	}
}

// vcpusBetween is each vCPU's run and wait time between two reads. A
// vCPU missing from either read leaves them all out, with a note: the VM's
// share summed over fewer vCPUs than it has would read as a VM held back.
func vcpusBetween(before, after []ThreadTimes, notes []string) ([]VCPU, []string) {
	if len(after) == 0 {
		return nil, notes
	}
	if len(before) != len(after) {
		return nil, append(notes, fmt.Sprintf("vCPU threads: %d read before the cell run, %d after: their times are not recorded", len(before), len(after)))
	}
	var bad []string
	out := make([]VCPU, len(after))
	for i, a := range after {
		b := before[i]
		switch {
		case !a.OK || !b.OK:
			bad = append(bad, fmt.Sprintf("vCPU %d (thread %d) not read", i, a.TID))
		case a.TID != b.TID:
			bad = append(bad, fmt.Sprintf("vCPU %d was thread %d, then %d", i, b.TID, a.TID))
		case a.RunNs < b.RunNs || a.WaitNs < b.WaitNs:
			bad = append(bad, fmt.Sprintf("vCPU %d (thread %d): its times went backwards", i, a.TID))
		}
		out[i] = VCPU{Index: i, TID: a.TID, RunNs: a.RunNs - b.RunNs, WaitNs: a.WaitNs - b.WaitNs}
	}
	if len(bad) > 0 {
		return nil, append(notes, strings.Join(bad, "; ")+": the vCPU threads' times are not recorded")
	}
	return out, notes
}

func appendNew(dst []string, notes ...string) []string {
	for _, n := range notes {
		if !slices.Contains(dst, n) {
			dst = append(dst, n)
		}
	}
	return dst
}
