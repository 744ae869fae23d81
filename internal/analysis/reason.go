package analysis

// ReasonKind is why a verdict's answer is what it is: what kept it from
// yes, or from being decided at all. Each kind says which of Reason's
// fields it fills; the words are render's (render.ReasonText).
type ReasonKind int

const (
	// NoReason is a yes's: nothing kept it.
	NoReason ReasonKind = iota
	// ReasonParamSets is that Workload and Phase ran with more than one set of
	// parameters (Params), which one verdict cannot compare.
	ReasonParamSets
	// ReasonAllInterfered is that other work on the host took OtherCPU during
	// every one of the Runs cell runs on VM.
	ReasonAllInterfered
	// ReasonInterferedCells is that every cell run of Cells was interfered with
	// (other work took OtherCPU), so they have no repeat left.
	ReasonInterferedCells
	// ReasonNoTwoClasses is that Workload (Phase) has no two classes run on both
	// Host and VM.
	ReasonNoTwoClasses
	// ReasonNoThreads is that Workload (Phase) has no thread count run at High
	// and Low on both Host and VM.
	ReasonNoThreads
	// ReasonNoRepeats is that Side has no repeats at its two classes.
	ReasonNoRepeats
	// ReasonIdle is that on Side a class did no work in any repeat (Side's
	// IdleHigh and IdleLow say which), so its ratio is undefined.
	ReasonIdle
	// ReasonTiedHost is that Side's (the host's) rates are too tied for its test
	// to reach Alpha, which untied ones could (UntiedP).
	ReasonTiedHost
	// ReasonFewHostRepeats is that Side's (the host's) repeats are too few for
	// its test to reach Alpha.
	ReasonFewHostRepeats
	// ReasonNoHostEffect is that Side's (the host's) test is not significant.
	ReasonNoHostEffect
	// ReasonHostReversed is that on Side (the host) the low class is the faster.
	ReasonHostReversed
	// ReasonHostReachesOne is that Side's (the host's) interval reaches 1x.
	ReasonHostReachesOne
	// ReasonFewVMRepeats is that VM's repeats are too few for an interval of
	// Confidence (Sequential) of its ratio: Shift's coverage is what they
	// reach. Pooled (Side, the VM's sensitivity, says its strata) when
	// Threads is 0, else at Threads with N1 vs N2 repeats.
	ReasonFewVMRepeats
	// ReasonVMKeeps is that the VM keeps a QoS effect, High/Low = Shift. At
	// Threads (not 0) it is that thread count's interval at Level over
	// ThreadCounts thread counts.
	ReasonVMKeeps
	// ReasonVMReversed is ReasonVMKeeps with the classes reversed in the
	// VM.
	ReasonVMReversed
	// ReasonBetweenEdges is that VM's ratio (Shift, at Threads or pooled) lies
	// between the band's yes edge Yes and its no edge No, which the host's
	// interval (Side, the host's) sets apart.
	ReasonBetweenEdges
	// ReasonOutsideBandAt is that VM's ratio at Threads (Shift) is not inside the
	// band.
	ReasonOutsideBandAt
	// ReasonHostEdge is that VM's pooled interval crosses the band's edge Yes,
	// which the low end of the host's interval (Side, the host's) sets.
	ReasonHostEdge
	// ReasonCrossesEdge is that VM's pooled interval crosses the band's edge.
	ReasonCrossesEdge
	// ReasonBlocked is that flagged cells would turn a yes (Blockers, each alone).
	ReasonBlocked
	// ReasonBlockedTogether is that the flagged cells (Blockers) would turn a yes
	// together, none alone; each blocker has the same Then and Because.
	ReasonBlockedTogether
)

// Reason is why a verdict's answer is what it is, as values: its Kind,
// and the numbers and names that kind fills (see each kind).
type Reason struct {
	Kind ReasonKind
	// Workload and Phase are what was judged; Host and VM the targets;
	// High and Low the classes.
	Workload, Phase string
	Host, VM        string
	High, Low       int
	// Params are the sets of parameters (CellKey.Params) the workload ran
	// with, in table order.
	Params []string
	// OtherCPU is what other work on the host took (CPUs); Runs the VM's
	// cell runs; Cells those left without a repeat.
	OtherCPU Float
	Runs     int
	Cells    []CellKey
	// Side is the sensitivity the reason speaks of: the host's, or the
	// VM's where its repeats are too few.
	Side Sensitivity
	// UntiedP is the smallest p the host's test could reach untied.
	UntiedP float64
	// Threads is the thread count the reason is at; 0 for the pooled
	// ratio. N1 and N2 are the VM's repeats of the two classes there.
	Threads int
	N1, N2  int
	// Shift is the VM ratio the reason judges, with its interval.
	Shift Shift
	// Confidence is the coverage asked of that interval; Sequential says
	// the verdict has more than one look (a look's coverage is printed to
	// a tenth of a percent).
	Confidence float64
	Sequential bool
	// Level is the Bonferroni coverage of one thread count's interval
	// for a no, over ThreadCounts thread counts.
	Level        float64
	ThreadCounts int
	// Yes and No are the band's edges, as ratios.
	Yes, No float64
	// Blockers are the flagged cells that would turn a yes.
	Blockers []Blocker
	// Cap is set when more repeats could decide but the schedule's last
	// look is behind it: the cap (max_repeats) was reached. (The
	// simulation counts these.)
	Cap *CapReached
}

// Blocker is a flagged cell that would turn a yes: at its most adverse
// repeat (its highest when Highest, else its lowest; Rate in its Unit per
// second) the rule would answer Then, Because.
type Blocker struct {
	Cell    Cell
	Highest bool
	Rate    float64
	Then    Outcome
	Because Reason
}

// CapReached says a schedule's cap (Repeats per cell, max_repeats) was
// reached at look Looks.
type CapReached struct {
	Repeats, Looks int
}
