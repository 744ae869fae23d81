package childproc

import (
	"errors"
	"os/exec"

	"golang.org/x/sys/unix"
)

// hasDeathSignal reports whether cmd's child gets a signal when the thread
// that forked it ends.
func hasDeathSignal(cmd *exec.Cmd) bool {
	return cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0
}

// exitWaiter returns a function that blocks until the child pid has exited
// (or has been reaped by someone else), without reaping it. It must be
// called before the child can be reaped: it opens a pidfd first, so a pid
// reused after the reap is never waited for by mistake.
func exitWaiter(pid int) func() {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		// A kernel before 5.3: wait by pid. A reused pid only keeps this
		// thread a while longer.
		return func() { waitNoReap(unix.P_PID, pid) }
	}
	return func() {
		waitNoReap(unix.P_PIDFD, fd)
		_ = unix.Close(fd)
	}
}

// waitNoReap waits with WNOWAIT until the child exits; ECHILD (reaped
// already by the caller's cmd.Wait) ends the wait too.
func waitNoReap(idType, id int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(idType, id, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
