package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/units"
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
	// HostCPUs are, on a VM whose records carry the host view, per thread
	// count compared, the host CPU its vCPU threads got per cell run (the
	// median over each class's cell runs): beside the guest's own view,
	// what the host gave the VM. VCPUs is how many vCPU threads it had.
	// Empty without host views.
	HostCPUs []ThreadHostCPUs `json:"host_cpus,omitempty"`
	VCPUs    int              `json:"vcpus,omitempty"`
}

// ThreadHostCPUs is the host CPU a VM's vCPU threads got per cell run at
// one thread count, at the high class and the low one.
type ThreadHostCPUs struct {
	Threads int   `json:"threads"`
	High    Float `json:"high"`
	Low     Float `json:"low"`
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
	}
	m.hostView(cells, k, target)
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

// hostView sets HostCPUs: per thread count, each class's median vCPU
// share over its cell runs that did work; none unless every one has some.
func (m *Mechanism) hostView(cells []Cell, k verdictKey, target string) {
	hi := cellsByThreads(cells, target, k.workload, k.phase, k.high)
	lo := cellsByThreads(cells, target, k.workload, k.phase, k.low)
	median := func(c Cell) Float {
		for _, u := range c.HostViews {
			if u != nil {
				m.VCPUs = max(m.VCPUs, len(u.VCPUs))
			}
		}
		return OrderStatsOf(positive(working(c, c.VCPUShares))).Median
	}
	for _, t := range k.threads {
		h := ThreadHostCPUs{Threads: t, High: median(hi[t]), Low: median(lo[t])}
		if h.High.IsNaN() || h.Low.IsNaN() {
			m.HostCPUs, m.VCPUs = nil, 0
			return
		}
		m.HostCPUs = append(m.HostCPUs, h)
	}
	if m.VCPUs == 0 {
		m.HostCPUs = nil
	}
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
	loHost, hiHost := m.hostText()
	return fmt.Sprintf("%s: %s got %s of %s%s to %s's %s%s, at %s %s (%s)", m.Target, qos.Class(lo.QoS), percent(float64(lo.CPUShare.Median)), cpu, loHost,
		qos.Class(hi.QoS), percent(float64(hi.CPUShare.Median)), hiHost, factorText(math.Exp(float64(m.SpeedShift.Estimate))), speed, in)
}

// hostText is the clauses of the host CPU a VM's vCPUs got, for the low
// class and the high one: " (its vCPUs got 1.9 host CPUs of 2)" and "
// (1.9)"; per thread count when more than one, " (its vCPUs got 1.0 host
// CPUs of 2 at 1 thread, 1.9 at 2)" and " (1.0, 1.9)". Empty without host
// views.
func (m Mechanism) hostText() (low, high string) {
	if len(m.HostCPUs) == 0 {
		return "", ""
	}
	one := func(x Float) string { return strconv.FormatFloat(float64(x), 'f', 1, 64) }
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
