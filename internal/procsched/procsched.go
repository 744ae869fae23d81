// Package procsched reads the scheduling a process runs under: its policy
// and nice, and the CPU limit of its cgroup.
package procsched

import (
	"fmt"
	"strings"
)

// Scheduling is how a process was started: `nice -n 10 qoslab` gives every
// thread nice 10, `chrt -b 0` SCHED_BATCH, a systemd unit's CPUQuota a
// cgroup CPU limit. Each skews what qoslab measures when its children
// inherit it, so it is recorded and warned about.
type Scheduling struct {
	// Policy is the main thread's scheduling policy as sched(7) names it
	// (SCHED_OTHER, SCHED_BATCH, ...); empty where the OS has none to read.
	Policy string `json:"policy,omitempty"`
	Nice   int    `json:"nice"`
	// CPULimit is the tightest CPU limit of the process's cgroup and its
	// ancestors; nil when there is none.
	CPULimit *CPULimit `json:"cgroup_cpu_limit"`
	// Unread says what could not be read, and why.
	Unread []string `json:"unread,omitempty"`
}

// CPULimit is a cgroup's CPU bandwidth limit.
type CPULimit struct {
	// Cgroup is the cgroup that sets it, as /proc/PID/cgroup names it.
	Cgroup string `json:"cgroup"`
	// Setting is the files it is read from, as they say it:
	// "cpu.max 50000 100000" (cgroup v2), "cpu.cfs_quota_us 50000,
	// cpu.cfs_period_us 100000" (v1).
	Setting string `json:"setting"`
	// CPUs is the CPU time it allows, in CPUs (quota over period).
	CPUs float64 `json:"cpus"`
}

// defaultPolicy is the policy a process gets unless told otherwise.
const defaultPolicy = "SCHED_OTHER"

// IsDefault reports whether s is what an ordinary start gives: the default
// policy (where there is one), nice 0, no CPU limit.
func (s Scheduling) IsDefault() bool {
	return (s.Policy == "" || s.Policy == defaultPolicy) && s.Nice == 0 && s.CPULimit == nil
}

// Text says s in a few words: "SCHED_OTHER nice=10, cgroup /a limits it to
// 0.5 CPUs (cpu.max 50000 100000)".
func (s Scheduling) Text() string {
	var parts []string
	if s.Policy != "" {
		parts = append(parts, fmt.Sprintf("%s nice=%d", s.Policy, s.Nice))
	} else {
		parts = append(parts, fmt.Sprintf("nice=%d", s.Nice))
	}
	if l := s.CPULimit; l != nil {
		parts = append(parts, fmt.Sprintf("cgroup %s limits it to %s CPUs (%s)", l.Cgroup, cpusText(l.CPUs), l.Setting))
	}
	return strings.Join(parts, ", ")
}

// Warnings say what in s is not the default and what that does to a
// measurement; none when s is the default.
func (s Scheduling) Warnings() []string {
	var out []string
	if (s.Policy != "" && s.Policy != defaultPolicy) || s.Nice != 0 {
		what := fmt.Sprintf("nice %d", s.Nice)
		if s.Policy != "" && s.Policy != defaultPolicy {
			what = s.Policy + ", " + what
		}
		out = append(out, fmt.Sprintf("qoslab itself runs at %s, not the default (SCHED_OTHER, nice 0): its own threads (the telemetry sampler, the agents' orchestration) run at it, and a child that cannot be started at the default class inherits it; run qoslab without nice or chrt", what))
	}
	if l := s.CPULimit; l != nil {
		out = append(out, fmt.Sprintf("qoslab runs in cgroup %s, which limits it to %s CPUs (%s): the host's agent, the VM and the contention spinners share that limit, so cells measure the limit as well as the class; run qoslab outside that cgroup", l.Cgroup, cpusText(l.CPUs), l.Setting))
	}
	return out
}

func cpusText(c float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", c), "0"), ".")
}
