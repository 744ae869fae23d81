package render

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/units"
)

// MechanismBrief says where the effect is in a few words: "in CPU share", "in
// speed", "in share and speed", "alike" (the classes ran alike: both
// ratios' intervals within the bound), "cannot tell", "not enough" (too
// few repeats with CPU time, or those unlike the rest), "not recorded";
// each thread count's where the words differ: "alike at 1 thread, cannot
// tell at 2 threads" (where the figures differ but the words agree, as
// "in CPU share" at both, the words once).
func MechanismBrief(m analysis.Mechanism) string {
	if len(m.ByThreads) > 0 {
		parts := make([]string, len(m.ByThreads))
		same := true
		for i, t := range m.ByThreads {
			parts[i] = MechanismBrief(t)
			same = same && parts[i] == parts[0]
		}
		if same {
			return parts[0]
		}
		for i, t := range m.ByThreads {
			parts[i] += " at " + units.Plural(t.Threads, "thread")
		}
		return strings.Join(parts, ", ")
	}
	switch {
	case m.Share == analysis.ReadNotRecorded || !m.Recorded():
		return "not recorded"
	case m.Share == analysis.ReadDiffers && m.Speed == analysis.ReadDiffers:
		return "in share and speed"
	case m.Share == analysis.ReadDiffers:
		return "in CPU share"
	case m.Speed == analysis.ReadDiffers:
		return "in speed"
	case m.Share == analysis.ReadAlike && m.Speed == analysis.ReadAlike:
		return "alike"
	case m.Share == analysis.ReadNotEnough || m.Speed == analysis.ReadNotEnough:
		return "not enough"
	}
	return "cannot tell"
}

// MechanismLine says what happened to the threads under the verdict: per
// target, the low class's CPU share beside the high class's and its speed
// relative to the high class's, and where the effect is:
//
//	host: background got 0.24% of a CPU to user-interactive's 99.8%, at 0.99x its speed per CPU-second (the effect is in CPU share); vm: background got 99% of a vCPU to user-interactive's 99%, at 1.00x its speed (the classes ran alike)
//
// per thread count where the counts differ ("host at 1 thread: ...; host
// at 2 threads: ..."), from how many repeats where some carry no CPU time
// ("from 10 of 12 repeats"), naming the repeats left out for too little
// CPU time. Empty when nothing was compared.
//
// Where the records carry the host's view, a VM's part says beside the
// guest's view the host CPU its vCPUs got per cell run: "vm: background
// got 97% of a vCPU (its vCPUs got 1.9 host CPUs of 2) to
// user-interactive's 97% (1.9), ...".
func MechanismLine(v analysis.Verdict) string {
	if len(v.Mechanism) == 0 {
		return ""
	}
	var parts []string
	recorded := false
	first := true
	for _, m := range v.Mechanism {
		recorded = recorded || m.Recorded()
		if len(m.ByThreads) == 0 {
			parts = append(parts, m.Target+": "+mechanismText(m, first))
			first = false
			continue
		}
		for _, t := range m.ByThreads {
			parts = append(parts, fmt.Sprintf("%s at %s: %s", m.Target, units.Plural(t.Threads, "thread"), mechanismText(t, first)))
			first = false
		}
	}
	if !recorded {
		return "not recorded: the records carry no CPU time (a run written before results schema 1.2), so share and speed cannot be told apart"
	}
	return strings.Join(parts, "; ")
}

// mechanismText is one target's (or thread count's) part of the mechanism line
// after its name; first says it is the line's first part, which spells its
// units out.
func mechanismText(m analysis.Mechanism, first bool) string {
	if !m.Recorded() {
		return "CPU time not recorded"
	}
	hi, lo := m.Classes[0], m.Classes[1]
	if hi.Unlike || lo.Unlike {
		var who []string
		for _, c := range []analysis.ClassUse{lo, hi} {
			if c.Unlike {
				who = append(who, fmt.Sprintf("%s's CPU time is in %d of its %d repeats, whose rates differ from the others'", qos.Class(c.QoS), c.Recorded, c.Repeats))
			}
		}
		return strings.Join(who, ", and ") + ": not described from them"
	}
	cpu := "a CPU"
	if m.Target != "host" {
		cpu = "a vCPU"
	}
	speed := "its speed"
	if first {
		speed += " per CPU-second"
	}
	notes := []string{readingText(m)}
	if k, n := hi.Recorded+lo.Recorded, hi.Repeats+lo.Repeats; k < n {
		notes = append(notes, fmt.Sprintf("from %d of %d repeats", k, n))
	}
	for _, c := range []analysis.ClassUse{lo, hi} {
		if len(c.LowCPU) > 0 {
			notes = append(notes, fmt.Sprintf("left out %s's %s: work on under %.1f ms of CPU time a thread, too little to read a speed from",
				qos.Class(c.QoS), repeatRefsText(c.LowCPU, m.Threads == 0 && len(threadCounts(c.LowCPU)) > 1), float64(analysis.MinReadableCPUNs)/1e6))
		}
	}
	loHost, hiHost := hostText(m)
	return fmt.Sprintf("%s got %s of %s%s to %s's %s%s, at %s %s (%s)", qos.Class(lo.QoS), percent(float64(lo.CPUShare.Median)), cpu, loHost,
		qos.Class(hi.QoS), percent(float64(hi.CPUShare.Median)), hiHost, factorText(math.Exp(float64(m.SpeedShift.Estimate))), speed, strings.Join(notes, "; "))
}

// readingText words the share and speed readings: where the effect is, or
// that the classes ran alike, or that it cannot be told and why.
func readingText(m analysis.Mechanism) string {
	ratio := func(sh analysis.Shift) string {
		return factorText(math.Exp(float64(sh.Low))) + ".." + factorText(math.Exp(float64(sh.High)))
	}
	bound := factorText(1/analysis.MechanismRatio) + ".." + factorText(analysis.MechanismRatio)
	other := func(r analysis.Reading, name string, sh analysis.Shift) string {
		if r == analysis.ReadCannotTell {
			return fmt.Sprintf(", whether in %s too cannot be told (its ratio %s reaches past %s)", name, ratio(sh), bound)
		}
		return ""
	}
	var text string
	switch {
	case m.Share == analysis.ReadDiffers && m.Speed == analysis.ReadDiffers:
		text = "the effect is in both share and speed"
		if m.Cancel {
			text += fmt.Sprintf(", which cancel: share %s, speed %s", factorText(math.Exp(float64(m.ShareShift.Estimate))), factorText(math.Exp(float64(m.SpeedShift.Estimate))))
		}
	case m.Share == analysis.ReadDiffers:
		text = "the effect is in CPU share" + other(m.Speed, "speed", m.SpeedShift)
	case m.Speed == analysis.ReadDiffers:
		text = "the effect is in speed" + other(m.Share, "CPU share", m.ShareShift)
	case m.Share == analysis.ReadAlike && m.Speed == analysis.ReadAlike:
		return "the classes ran alike"
	case m.Share == analysis.ReadNotEnough || m.Speed == analysis.ReadNotEnough:
		return "too few repeats with CPU time to tell whether the classes ran alike"
	default:
		var wide []string
		if m.Share == analysis.ReadCannotTell {
			wide = append(wide, "the share ratio's interval "+ratio(m.ShareShift))
		}
		if m.Speed == analysis.ReadCannotTell {
			wide = append(wide, "the speed ratio's interval "+ratio(m.SpeedShift))
		}
		return fmt.Sprintf("cannot tell whether the classes ran alike: %s reaches past %s", strings.Join(wide, " and "), bound)
	}
	switch m.SpeedGap {
	case analysis.GapNoHostView:
		text += "; a speed gap in the VM without the host's view: the host may have taken the vCPU"
	case analysis.GapHostTookVCPU:
		text += "; the host took the vCPU: the slower class's vCPUs got less of the host's CPUs"
	case analysis.GapInGuest:
		text += "; the vCPUs got alike from the host, so the gap is the guest's"
	}
	return text
}

// threadCounts are the distinct thread counts of refs.
func threadCounts(refs []analysis.RepeatRef) []int {
	var out []int
	for _, r := range refs {
		if !slices.Contains(out, r.Threads) {
			out = append(out, r.Threads)
		}
	}
	return out
}

// repeatRefsText names repeats: "repeat 3", "repeats 2 and 5", with their
// thread counts when withThreads ("repeat 3 at 1 thread and repeat 2 at 2
// threads").
func repeatRefsText(refs []analysis.RepeatRef, withThreads bool) string {
	var parts []string
	for _, t := range threadCounts(refs) {
		var nums []string
		for _, r := range refs {
			if r.Threads == t {
				nums = append(nums, strconv.Itoa(r.Repeat))
			}
		}
		p := "repeat " + nums[0]
		if len(nums) > 1 {
			p = "repeats " + andList(nums)
		}
		if withThreads {
			p += " at " + units.Plural(t, "thread")
		}
		parts = append(parts, p)
	}
	return andList(parts)
}

// hostText is the clauses of the host CPU a VM's vCPUs got, for the low
// class and the high one: " (its vCPUs got 1.9 host CPUs of 2)" and "
// (1.9)"; per thread count when more than one, " (its vCPUs got 1.0 host
// CPUs of 2 at 1 thread, 1.9 at 2)" and " (1.0, 1.9)". Empty without host
// views.
func hostText(m analysis.Mechanism) (low, high string) {
	if len(m.HostCPUs) == 0 {
		return "", ""
	}
	one := func(x analysis.Float) string { return strconv.FormatFloat(float64(x), 'f', 1, 64) }
	var los, his []string
	for i, h := range m.HostCPUs {
		l := one(h.Low)
		if len(m.HostCPUs) > 1 {
			l += fmt.Sprintf(" at %d", h.Threads)
			if i == 0 {
				l = fmt.Sprintf("%s at %s", one(h.Low), units.Plural(h.Threads, "thread"))
			}
		}
		if i == 0 {
			l = strings.Replace(l, one(h.Low), fmt.Sprintf("%s host CPUs of %d", one(h.Low), m.VCPUs), 1)
		}
		los, his = append(los, l), append(his, one(h.High))
	}
	return " (its vCPUs got " + strings.Join(los, ", ") + ")", " (" + strings.Join(his, ", ") + ")"
}

// factorText writes a ratio of speeds (or shares) as the mechanism line
// reads it: two decimals from 0.1x to 10x ("0.99x", "1.00x", "0.35x"),
// else three significant digits: a description, not a test's estimate.
func factorText(r float64) string {
	if r >= 0.1 && r < 10 {
		return strconv.FormatFloat(r, 'f', 2, 64) + "x"
	}
	return FormatRatio(analysis.Float(r))
}
