package guestinit

// agentArg is the first argument that starts the agent binary as the
// guest's agent process: what init (PID 1) runs once the guest is up. It is
// followed by init's boot times.
//
// The agent does not serve from PID 1 itself: a Go panic in any goroutine
// of PID 1 would end it and panic the kernel, and reaping orphans with
// wait4(-1) in the process whose os/exec children the procs workload waits
// for would steal their exit statuses. So PID 1 only brings the system up,
// reaps whatever it inherits, and powers off when the agent process ends,
// however it ends; the agent's worker processes stay its own children.
const agentArg = "__qoslab-guest-agent"

// applies decides Applies from its facts: the agent process is asked for by
// agentArg; PID 1 is the guest's init when the kernel started it as /init
// (no arguments) or the image holds the init configuration, so that the
// agent run as PID 1 of a container with flags stays a plain agent.
func applies(pid int, args []string, configExists func() bool) bool {
	if len(args) > 0 && args[0] == agentArg {
		return true
	}
	if pid != 1 {
		return false
	}
	return len(args) == 0 || configExists()
}
