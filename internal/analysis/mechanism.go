package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/qos"
)

// mechanismRatio is how far apart two classes' shares (or speeds) must be,
// beyond their interval, for the mechanism line to say a QoS effect is in
// them: a tenth either way, under which the classes ran alike.
const mechanismRatio = 1.1

// ClassUse is what one class's threads got on one target, over the
// repeats of the thread counts a verdict compared: their CPU share (CPU
// time over wall time) and their speed (work per CPU-second).
type ClassUse struct {
	QoS      int        `json:"qos"`
	CPUShare OrderStats `json:"cpu_share"`
	Speed    OrderStats `json:"speed"`
}

// Mechanism is how a target's QoS effect came about. A thread's rate is
// its CPU share times its speed, so the ratio of the two classes' rates is
// the ratio of their shares times that of their speeds: on a contended
// Linux host a low class keeps its speed and loses its share
// (SCHED_IDLE); on Apple silicon it keeps most of its share and loses
// speed (efficiency cores); in a VM both classes ride the same vCPU
// threads, so both ratios go to 1.
type Mechanism struct {
	Target string `json:"target"`
	// Classes are the high class's use, then the low class's.
	Classes []ClassUse `json:"classes"`
	// ShareShift and SpeedShift are ln(low class's) - ln(high class's)
	// share and speed (Hodges-Lehmann, within thread counts, 90%
	// intervals); NaN where the records carry no CPU time.
	ShareShift Shift `json:"share_shift"`
	SpeedShift Shift `json:"speed_shift"`
	// In says where the effect is: "share", "speed", "share and speed",
	// or "" when the classes ran alike in both; "not recorded" without
	// CPU times.
	In string `json:"in"`
	// HostCPUs are, on a VM whose records carry the host view, the host
	// CPU its vCPU threads got per cell run (the median over the class's
	// cell runs), the high class's then the low's: beside the guest's own
	// view, what the host gave the VM; VCPUs is how many vCPU threads it
	// had. Empty without host views.
	HostCPUs []Float `json:"host_cpus,omitempty"`
	VCPUs    int     `json:"vcpus,omitempty"`
}

// Recorded says whether the records carried CPU times for both classes.
func (m Mechanism) Recorded() bool {
	return len(m.Classes) == 2 && m.Classes[0].CPUShare.N > 0 && m.Classes[1].CPUShare.N > 0 && !m.ShareShift.Estimate.IsNaN()
}

// mechanisms is the mechanism of each target a verdict compares, host
// first.
func mechanisms(cells []Cell, k verdictKey) []Mechanism {
	return []Mechanism{mechanismOf(cells, k, k.host), mechanismOf(cells, k, k.vm)}
}

func mechanismOf(cells []Cell, k verdictKey, target string) Mechanism {
	m := Mechanism{Target: target}
	var shares, speeds [2][][]float64 // [high, low] by thread count
	for i, q := range []int{k.high, k.low} {
		byThreads := cellsByThreads(cells, target, k.workload, k.phase, q)
		var allShares, allSpeeds []float64
		for _, t := range k.threads {
			c := byThreads[t]
			sh, sp := positive(working(c, c.CPUShares)), positive(working(c, c.Speeds))
			shares[i], speeds[i] = append(shares[i], sh), append(speeds[i], sp)
			allShares, allSpeeds = append(allShares, sh...), append(allSpeeds, sp...)
		}
		m.Classes = append(m.Classes, ClassUse{QoS: q, CPUShare: OrderStatsOf(allShares), Speed: OrderStatsOf(allSpeeds)})
		m.hostView(byThreads, k.threads)
	}
	if len(m.HostCPUs) != 2 || m.VCPUs == 0 {
		m.HostCPUs, m.VCPUs = nil, 0
	}
	m.ShareShift = logShiftAt(shares[1], shares[0], equivalenceConfidence)
	m.SpeedShift = logShiftAt(speeds[1], speeds[0], equivalenceConfidence)
	if !m.Recorded() {
		m.In = "not recorded"
		return m
	}
	var in []string
	if differs(m.ShareShift) {
		in = append(in, "share")
	}
	if differs(m.SpeedShift) {
		in = append(in, "speed")
	}
	m.In = strings.Join(in, " and ")
	return m
}

// hostView adds a class's host CPU per cell run (the median of its cells'
// vCPU shares at the thread counts compared, over the runs that did work)
// to HostCPUs, and counts the vCPU threads.
func (m *Mechanism) hostView(byThreads map[int]Cell, threads []int) {
	var shares []float64
	for _, t := range threads {
		c := byThreads[t]
		shares = append(shares, positive(working(c, c.VCPUShares))...)
		for _, u := range c.HostViews {
			if u != nil {
				m.VCPUs = max(m.VCPUs, len(u.VCPUs))
			}
		}
	}
	m.HostCPUs = append(m.HostCPUs, OrderStatsOf(shares).Median)
}

// differs says two classes' shares (or speeds) differ: their ratio's
// interval lies beyond mechanismRatio either way.
func differs(sh Shift) bool {
	lim := math.Log(mechanismRatio)
	return float64(sh.Low) > lim || float64(sh.High) < -lim
}

// working are the values of per-repeat v for the repeats of c that did
// work: an idle repeat is left out of every statistic alike.
func working(c Cell, v []Float) []Float {
	var out []Float
	for i, x := range v {
		if i < len(c.TotalRates) && !idleRate(c.TotalRates[i]) {
			out = append(out, x)
		}
	}
	return out
}

// positive are the finite positive values of v: shares and speeds have a
// logarithm only then.
func positive(v []Float) []float64 {
	var out []float64
	for _, x := range v {
		if f := float64(x); f > 0 && !math.IsInf(f, 0) {
			out = append(out, f)
		}
	}
	return out
}

// Brief says where the effect is in a few words: "in CPU share", "in
// speed", "in share and speed", "alike" (the classes ran alike), "not
// recorded".
func (m Mechanism) Brief() string {
	switch m.In {
	case "":
		return "alike"
	case "not recorded":
		return m.In
	case "share":
		return "in CPU share"
	}
	return "in " + m.In
}

// MechanismLine says what happened to the threads under the verdict: per
// target, the low class's CPU share beside the high class's and its speed
// relative to the high class's, and where the effect is:
//
//	host: background got 0.24% of a CPU to user-interactive's 99.8%, at 0.99x its speed per CPU-second (the effect is in CPU share); vm: background got 99% of a vCPU to user-interactive's 99%, at 1.00x its speed (the classes ran alike)
//
// Where the records carry the host's view, a VM's part says beside the
// guest's view the host CPU its vCPUs got per cell run: "vm: background
// got 97% of a vCPU (its vCPUs got 1.9 host CPUs of 2) to
// user-interactive's 97% (1.9), ...".
//
// Empty when nothing was compared.
func (v Verdict) MechanismLine() string {
	if len(v.Mechanism) == 0 {
		return ""
	}
	var parts []string
	recorded := false
	for i, m := range v.Mechanism {
		recorded = recorded || m.Recorded()
		parts = append(parts, m.text(i == 0))
	}
	if !recorded {
		return "not recorded: the records carry no CPU time (a run written before results schema 1.2), so share and speed cannot be told apart"
	}
	return strings.Join(parts, "; ")
}

// text is one target's part of the mechanism line; first says it is the
// line's first part, which spells its units out.
func (m Mechanism) text(first bool) string {
	if !m.Recorded() {
		return m.Target + ": CPU time not recorded"
	}
	hi, lo := m.Classes[0], m.Classes[1]
	cpu := "a CPU"
	if m.Target != "host" {
		cpu = "a vCPU"
	}
	speed := "its speed"
	if first {
		speed += " per CPU-second"
	}
	in := "the classes ran alike"
	switch m.In {
	case "share":
		in = "the effect is in CPU share"
	case "speed":
		in = "the effect is in speed"
	case "share and speed":
		in = "the effect is in both share and speed"
	}
	loHost, hiHost := "", ""
	if len(m.HostCPUs) == 2 && !m.HostCPUs[0].IsNaN() && !m.HostCPUs[1].IsNaN() {
		loHost = fmt.Sprintf(" (its vCPUs got %s host CPUs of %d)", strconv.FormatFloat(float64(m.HostCPUs[1]), 'f', 1, 64), m.VCPUs)
		hiHost = fmt.Sprintf(" (%s)", strconv.FormatFloat(float64(m.HostCPUs[0]), 'f', 1, 64))
	}
	return fmt.Sprintf("%s: %s got %s of %s%s to %s's %s%s, at %s %s (%s)", m.Target, qos.Class(lo.QoS), percent(float64(lo.CPUShare.Median)), cpu, loHost,
		qos.Class(hi.QoS), percent(float64(hi.CPUShare.Median)), hiHost, factorText(math.Exp(float64(m.SpeedShift.Estimate))), speed, in)
}

// factorText writes a ratio of speeds (or shares) as the mechanism line
// reads it: two decimals from 0.1x to 10x ("0.99x", "1.00x", "0.35x"),
// else three significant digits: a description, not a test's estimate.
func factorText(r float64) string {
	if r >= 0.1 && r < 10 {
		return strconv.FormatFloat(r, 'f', 2, 64) + "x"
	}
	return FormatRatio(Float(r))
}

// FormatShare writes a CPU share as a percentage (percent), "-" when it
// is not a number.
func FormatShare(share Float) string {
	if share.IsNaN() {
		return "-"
	}
	return percent(float64(share))
}

// percent writes a share as a percentage with two significant digits below
// 10% and three from there: "0.24%", "2.5%", "99.8%".
func percent(share float64) string {
	p := 100 * share
	digits := 3
	if p < 10 {
		digits = 2
	}
	return strconv.FormatFloat(p, 'g', digits, 64) + "%"
}
