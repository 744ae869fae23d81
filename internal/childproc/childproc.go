// Package childproc starts child processes from OS threads of their own,
// at an explicit class, so that no child's life or class depends on which
// of the controller's threads happened to start it.
//
// On Linux a child started with a parent-death signal (SysProcAttr's
// Pdeathsig) gets it when the *thread* that forked it ends, not the
// process (prctl(2), PR_SET_PDEATHSIG), and a child inherits the forking
// thread's policy and nice. The Go runtime ends an OS thread whenever a
// goroutine locked to it returns, and hands any other thread to whichever
// goroutine runs next, which may change its class. So a child forked from
// an arbitrary thread could be killed when some unrelated goroutine (a
// sampler that raised its own class) ended on that thread, and could start
// at whatever class that thread last had. Start forks from a thread that
// nothing else ever runs on, gives it the class asked for first, and keeps
// it until the child has exited.
package childproc

import (
	"os/exec"
	"runtime"

	"github.com/qoslab/qoslab/internal/qos"
)

// Start starts cmd (cmd.Start) from a new goroutine locked to its OS thread
// for good: the thread is given class first (qos.Unspecified leaves it as
// it is), so the child starts at that class and what was applied is
// returned; when cmd asks for a parent-death signal the thread then waits
// until the child has exited, without reaping it (the caller still calls
// cmd.Wait), and ends with its goroutine. No other goroutine can run on
// that thread meanwhile, so nothing changes its class or ends it early.
func Start(cmd *exec.Cmd, class qos.Class) (qos.Applied, error) {
	type started struct {
		applied qos.Applied
		err     error
	}
	res := make(chan started, 1)
	go func() {
		// Never unlocked: the thread's class may have been changed, so it
		// must not go back to the runtime's pool; it ends with this
		// goroutine, after the child.
		runtime.LockOSThread()
		var a qos.Applied
		if class != qos.Unspecified {
			a = qos.ApplySelf(class)
		} else {
			a.Applied, a.Detail, _ = qos.ReadSelf()
		}
		if err := cmd.Start(); err != nil {
			res <- started{a, err}
			return
		}
		wait := func() {}
		if hasDeathSignal(cmd) {
			wait = exitWaiter(cmd.Process.Pid)
		}
		res <- started{applied: a}
		wait()
	}()
	r := <-res
	return r.applied, r.err
}
