package telemetry

import (
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/qos"
)

// PolicyText says in plain words what a thread's scheduling policy, as a
// Thread's Policy records it ("SCHED_OTHER nice=-10"), is: the QoS class
// whose Linux mapping it is, then the policy, "user-interactive
// (SCHED_OTHER, nice -10)", "background (SCHED_IDLE)"; a policy that is no
// class's mapping is said as it is, "SCHED_FIFO, real-time priority 10".
// SCHED_IDLE's nice is left out: the kernel ignores it.
func PolicyText(policy string) string {
	fields := strings.Fields(policy)
	if len(fields) == 0 {
		return policy
	}
	name := fields[0]
	if len(fields) == 1 {
		return policy // no nice recorded: nothing to say more
	}
	nice, rtprio := 0, -1
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return policy
		}
		switch k {
		case "nice":
			nice = n
		case "rtprio":
			rtprio = n
		}
	}
	words := name
	switch {
	case rtprio >= 0:
		words += ", real-time priority " + strconv.Itoa(rtprio)
	case name != "SCHED_IDLE":
		words += ", nice " + strconv.Itoa(nice)
	}
	if c := qos.ClassOfLinuxPolicy(name, nice); c != qos.Unspecified && rtprio < 0 {
		return c.String() + " (" + words + ")"
	}
	return words
}
