package analysis

import (
	"math"
	"slices"
)

// MechanismRatio is how far apart two classes' shares (or speeds) must be,
// beyond their interval, for the mechanism line to say a QoS effect is in
// them: a tenth either way. The classes ran alike only where the ratio's
// whole interval lies within it; an interval that reaches across it cannot
// tell (a share ratio of 0.004x..0.95x is no evidence of "alike").
const MechanismRatio = 1.1

// Reading is what the mechanism makes of one ratio of the two classes'
// use, their CPU shares or their speeds: a value, worded where the line is
// written (render.MechanismLine, render.MechanismBrief).
type Reading string

// The readings of a ratio.
const (
	// ReadNotRecorded: the records carry no CPU time.
	ReadNotRecorded Reading = "not recorded"
	// ReadNotEnough: too few repeats carry CPU time for an interval at the
	// coverage asked, or those that do are not like the rest
	// (ClassUse.Unlike), so the ratio is not read.
	ReadNotEnough Reading = "not enough"
	// ReadAlike: the ratio's interval lies inside
	// 1/MechanismRatio..MechanismRatio.
	ReadAlike Reading = "alike"
	// ReadDiffers: the ratio's interval lies wholly beyond MechanismRatio,
	// either way.
	ReadDiffers Reading = "differs"
	// ReadCannotTell: the interval reaches across the bound.
	ReadCannotTell Reading = "cannot tell"
)

// SpeedGap is how a speed gap between the classes in the VM reads beside
// the host's view of the cell runs: inside the guest a vCPU the host did
// not run looks like a slow CPU, so the guest's own CPU time cannot say
// whether the guest's scheduler or the host made the gap.
type SpeedGap string

// The readings of a speed gap in the VM.
const (
	// GapNoHostView: the run recorded no host view of the vCPUs.
	GapNoHostView SpeedGap = "no host view"
	// GapHostTookVCPU: the slower class's vCPUs got less of the host's
	// CPUs (beyond MechanismRatio): the host took the vCPU.
	GapHostTookVCPU SpeedGap = "host took the vCPU"
	// GapInGuest: the vCPUs got alike from the host: the gap is the
	// guest's.
	GapInGuest SpeedGap = "in the guest"
)

// RepeatRef names one repeat of a class's cell.
type RepeatRef struct {
	Threads int `json:"threads"`
	Repeat  int `json:"repeat"`
}

// ClassUse is what one class's threads got on one target, over the
// repeats of the thread counts a verdict compared: their CPU share (CPU
// time over wall time) and their speed (work per CPU-second).
type ClassUse struct {
	QoS      int        `json:"qos"`
	CPUShare OrderStats `json:"cpu_share"`
	Speed    OrderStats `json:"speed"`
	// Repeats counts the repeats that did work; Recorded those of them
	// the figures come from: with CPU time, and enough of it (LowCPU).
	Repeats  int `json:"repeats"`
	Recorded int `json:"recorded"`
	// LowCPU are the repeats left out for doing work on too little CPU
	// time to read a speed from (Cell.LowCPU).
	LowCPU []RepeatRef `json:"low_cpu,omitempty"`
	// Unlike says the repeats the figures come from ran at rates unlike
	// the class's other repeats (medians more than MechanismRatio apart):
	// a subset like that does not describe the class, so the mechanism
	// reads nothing from it.
	Unlike bool `json:"unlike,omitempty"`
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
	// Threads is the one thread count a mechanism of ByThreads is of; 0
	// for one over all the verdict's thread counts.
	Threads int `json:"threads,omitempty"`
	// Classes are the high class's use, then the low class's.
	Classes []ClassUse `json:"classes"`
	// ShareShift and SpeedShift are ln(low class's) - ln(high class's)
	// share and speed (Hodges-Lehmann, within thread counts, 90%
	// intervals); NaN where the records carry no CPU time.
	ShareShift Shift `json:"share_shift"`
	SpeedShift Shift `json:"speed_shift"`
	// Share and Speed are what the mechanism reads from each ratio.
	Share Reading `json:"share_reading"`
	Speed Reading `json:"speed_reading"`
	// In says where the effect is: the ratios that differ, or EffectNowhere
	// when neither does (Share and Speed say whether they ran alike or
	// cannot tell); EffectNotRecorded without CPU times.
	In EffectIn `json:"in"`
	// Cancel says share and speed both differ, in opposite directions.
	Cancel bool `json:"cancel,omitempty"`
	// SpeedGap reads a speed gap in the VM (Speed differs on a target
	// other than the host) beside the host's view; empty elsewhere.
	SpeedGap SpeedGap `json:"speed_gap,omitempty"`
	// ByThreads are the mechanism at each of the verdict's thread counts,
	// where they differ (in a reading, or a class's share or speed by more
	// than MechanismRatio): pooled figures would describe none of them.
	ByThreads []Mechanism `json:"by_threads,omitempty"`
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
	return []Mechanism{mechanismAt(cells, k, k.host), mechanismAt(cells, k, k.vm)}
}

// mechanismAt is a target's mechanism over the verdict's thread counts,
// with each count's own where they differ (Mechanism.ByThreads).
func mechanismAt(cells []Cell, k verdictKey, target string) Mechanism {
	m := mechanismOf(cells, k, target, k.threads)
	if len(k.threads) < 2 || !m.Recorded() {
		return m
	}
	var per []Mechanism
	for _, t := range k.threads {
		per = append(per, mechanismOf(cells, k, target, []int{t}))
	}
	if threadCountsDiffer(per) {
		for i := range per {
			per[i].Threads = k.threads[i]
		}
		m.ByThreads = per
	}
	return m
}

// threadCountsDiffer says the thread counts' mechanisms differ: in a
// reading, or in a class's median share or speed, by more than
// MechanismRatio and beyond both medians' intervals (user-interactive's
// 87.8% of a CPU at 1 thread and 53.6% at 2 are not one 86.4%; a starved
// class's crumbs, 0.3% at one count and 0.18% at another, vary by nature
// and their intervals overlap).
func threadCountsDiffer(per []Mechanism) bool {
	apart := func(a, b OrderStats) bool {
		x, y := float64(a.Median), float64(b.Median)
		return x > 0 && y > 0 && math.Abs(math.Log(x/y)) > math.Log(MechanismRatio) &&
			(a.CILow > b.CIHigh || b.CILow > a.CIHigh)
	}
	first := per[0]
	for _, m := range per[1:] {
		if m.Share != first.Share || m.Speed != first.Speed || m.Recorded() != first.Recorded() {
			return true
		}
		if !m.Recorded() {
			continue
		}
		for i := range m.Classes {
			if apart(m.Classes[i].CPUShare, first.Classes[i].CPUShare) || apart(m.Classes[i].Speed, first.Classes[i].Speed) {
				return true
			}
		}
	}
	return false
}

// mechanismOf is a target's mechanism over the thread counts given: each
// class's use from its readable repeats (readable), the two ratios' shifts
// stratified by thread count, and what is read from them.
func mechanismOf(cells []Cell, k verdictKey, target string, threads []int) Mechanism {
	m := Mechanism{Target: target}
	var shares, speeds [2][][]float64 // [high, low] by thread count
	var hostShares [2][]Float
	for i, q := range []int{k.high, k.low} {
		byThreads := cellsByThreads(cells, target, k.workload, k.phase, q)
		var allShares, allSpeeds []float64
		u := ClassUse{QoS: q}
		for _, t := range threads {
			c := byThreads[t]
			r := readable(c)
			shares[i], speeds[i] = append(shares[i], r.shares), append(speeds[i], r.speeds)
			allShares, allSpeeds = append(allShares, r.shares...), append(allSpeeds, r.speeds...)
			u.Repeats += r.working
			u.Recorded += len(r.shares)
			u.Unlike = u.Unlike || r.unlike
			for _, p := range r.lowCPU {
				u.LowCPU = append(u.LowCPU, RepeatRef{Threads: t, Repeat: repeatNumber(c, p)})
			}
			hostShares[i] = append(hostShares[i], hostVCPUShares(c)...)
		}
		u.CPUShare, u.Speed = OrderStatsOf(allShares), OrderStatsOf(allSpeeds)
		m.Classes = append(m.Classes, u)
	}
	m.hostView(cells, k, target, threads)
	m.ShareShift = logShiftAt(shares[1], shares[0], equivalenceConfidence)
	m.SpeedShift = logShiftAt(speeds[1], speeds[0], equivalenceConfidence)
	if !m.Recorded() {
		m.In, m.Share, m.Speed = EffectNotRecorded, ReadNotRecorded, ReadNotRecorded
		return m
	}
	m.Share, m.Speed = readingOf(m.ShareShift), readingOf(m.SpeedShift)
	if m.Classes[0].Unlike || m.Classes[1].Unlike {
		m.Share, m.Speed = ReadNotEnough, ReadNotEnough
	}
	m.In = effectIn(m.Share == ReadDiffers, m.Speed == ReadDiffers)
	m.Cancel = m.In == EffectInBoth && (m.ShareShift.Estimate > 0) != (m.SpeedShift.Estimate > 0)
	if m.Speed == ReadDiffers && target != k.host {
		slower := 0
		if m.SpeedShift.Estimate < 0 {
			slower = 1
		}
		m.SpeedGap = ReadSpeedGap(slower, hostShares)
	}
	return m
}

// hostView sets HostCPUs: per thread count, each class's median vCPU
// share over its cell runs that did work; none unless every one has some.
func (m *Mechanism) hostView(cells []Cell, k verdictKey, target string, threads []int) {
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
	for _, t := range threads {
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

// readingOf reads one ratio's shift (see Reading): not enough without an
// interval at the coverage asked, differs or alike where the interval lies
// wholly beyond or within MechanismRatio, else cannot tell.
func readingOf(sh Shift) Reading {
	if sh.Estimate.IsNaN() || float64(sh.Confidence) < equivalenceConfidence-1e-9 {
		return ReadNotEnough
	}
	lim := math.Log(MechanismRatio)
	lo, hi := float64(sh.Low), float64(sh.High)
	switch {
	case lo > lim || hi < -lim:
		return ReadDiffers
	case lo >= -lim && hi <= lim:
		return ReadAlike
	}
	return ReadCannotTell
}

// hostVCPUShares are the host CPUs the VM's vCPUs got in each repeat of c
// that did work, from the host's view of its cell runs; none where the
// run recorded no host view. The hook for the host view: once Cell
// carries it per repeat (VCPUShares), its nil here is c.VCPUShares.
func hostVCPUShares(c Cell) []Float { return working(c, c.VCPUShares) }

// ReadSpeedGap reads a speed gap between the classes in the VM beside the
// host's view: vcpuShares are, per class (high, then low), the host CPUs
// the VM's vCPUs got in its repeats (hostVCPUShares), slower the class
// (0 high, 1 low) whose speed per vCPU-second was lower. Without a host
// view the gap cannot be told from a vCPU the host did not run
// (GapNoHostView); where the slower class's vCPUs got less than the
// other's beyond MechanismRatio the host took the vCPU
// (GapHostTookVCPU); else the gap is the guest's (GapInGuest).
func ReadSpeedGap(slower int, vcpuShares [2][]Float) SpeedGap {
	a, b := positive(vcpuShares[slower]), positive(vcpuShares[1-slower])
	if len(a) == 0 || len(b) == 0 {
		return GapNoHostView
	}
	ma, mb := median(slices.Sorted(slices.Values(a))), median(slices.Sorted(slices.Values(b)))
	if ma*MechanismRatio < mb {
		return GapHostTookVCPU
	}
	return GapInGuest
}

// use is what a cell's repeats give the mechanism: the shares and speeds
// of the repeats it reads (working, with readable CPU time), how many did
// work, those left out for too little CPU time (positions in repeat
// order), and whether the read ones ran unlike the rest.
type use struct {
	shares, speeds []float64
	working        int
	lowCPU         []int
	unlike         bool
}

// readable is what c's repeats give the mechanism (use). The repeats with
// CPU time stand for the class only when their rates are like those of the
// repeats without (those left out for too little CPU time are named
// instead): 2 repeats of 6 at a full CPU's rate, the rest at crumbs
// (a host effect of 240x), would describe a class that ran alike.
func readable(c Cell) use {
	var u use
	var read, rest []float64
	for i, rate := range c.TotalRates {
		if idleRate(rate) {
			continue
		}
		u.working++
		if slices.Contains(c.LowCPU, i) {
			u.lowCPU = append(u.lowCPU, i) // named apart, not weighed as unrecorded
			continue
		}
		sh, sp := at(c.CPUShares, i), at(c.Speeds, i)
		if !(sh > 0) || !(sp > 0) || math.IsInf(sh, 0) || math.IsInf(sp, 0) {
			rest = append(rest, rate)
			continue
		}
		u.shares, u.speeds = append(u.shares, sh), append(u.speeds, sp)
		read = append(read, rate)
	}
	if len(read) > 0 && len(rest) > 0 {
		a, b := median(slices.Sorted(slices.Values(read))), median(slices.Sorted(slices.Values(rest)))
		u.unlike = math.Abs(math.Log(a/b)) > math.Log(MechanismRatio)
	}
	return u
}

// repeatNumber is the number of c's repeat at position i.
func repeatNumber(c Cell, i int) int {
	if i < len(c.Repeats) {
		return c.Repeats[i]
	}
	return i + 1
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

// EffectIn is where a mechanism finds the effect, a token of the JSON.
type EffectIn string

// Where the effect is.
const (
	EffectNowhere     EffectIn = ""
	EffectInShare     EffectIn = "share"
	EffectInSpeed     EffectIn = "speed"
	EffectInBoth      EffectIn = "share and speed"
	EffectNotRecorded EffectIn = "not recorded"
)

// effectIn is where the effect is when the share and the speed ratios
// differ as said.
func effectIn(share, speed bool) EffectIn {
	switch {
	case share && speed:
		return EffectInBoth
	case share:
		return EffectInShare
	case speed:
		return EffectInSpeed
	}
	return EffectNowhere
}
