//go:build darwin

package hostview

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

// libSystemPath holds libproc's proc_pidinfo and mach_timebase_info.
const libSystemPath = "/usr/lib/libSystem.B.dylib"

// procPIDTaskInfo is PROC_PIDTASKINFO, <sys/proc_info.h>'s flavor of
// proc_pidinfo that fills a struct proc_taskinfo.
const procPIDTaskInfo = 4

// libproc holds the calls, bound through purego: qoslab on a Mac reaches
// the framework through cgo, but this package is built without it too.
type libproc struct {
	pidinfo  func(pid int32, flavor int32, arg uint64, buffer unsafe.Pointer, size int32) int32 // proc_pidinfo
	timebase Timebase
}

// loadLibproc binds proc_pidinfo and reads the timebase once; the handle
// is never closed: the calls are made for the life of the process.
var loadLibproc = sync.OnceValues(func() (*libproc, error) {
	lib, err := purego.Dlopen(libSystemPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("dlopen %s: %w", libSystemPath, err)
	}
	var l libproc
	var machTimebaseInfo func(info *Timebase) int32 // mach_timebase_info
	for _, f := range []struct {
		name string
		fptr any
	}{
		{"proc_pidinfo", &l.pidinfo},
		{"mach_timebase_info", &machTimebaseInfo},
	} {
		sym, err := purego.Dlsym(lib, f.name)
		if err != nil {
			return nil, fmt.Errorf("dlsym %s in %s: %w", f.name, libSystemPath, err)
		}
		purego.RegisterFunc(f.fptr, sym)
	}
	// struct mach_timebase_info is two uint32_t, numer then denom, as
	// Timebase is.
	if kr := machTimebaseInfo(&l.timebase); kr != 0 {
		return nil, fmt.Errorf("mach_timebase_info: kern_return_t %d", kr)
	}
	return &l, nil
})

// ProcessCPUTime is process pid's CPU time so far, user and system, in
// nanoseconds: proc_pidinfo(pid, PROC_PIDTASKINFO), which a process may
// ask of another process of the same user (Virtualization.framework's
// service process runs as the user who started the VM), converted from
// Mach absolute time units with mach_timebase_info.
func ProcessCPUTime(pid int) (int64, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return 0, fmt.Errorf("pid %d: want a process id from 1 to %d", pid, math.MaxInt32)
	}
	l, err := loadLibproc()
	if err != nil {
		return 0, err
	}
	var buf [procTaskInfoSize]byte
	n := l.pidinfo(int32(pid), procPIDTaskInfo, 0, unsafe.Pointer(&buf[0]), int32(len(buf))) //nolint:gosec // G103, G115: proc_pidinfo fills buf through this pointer during the call; pid is within int32 (checked above)
	if n <= 0 {
		// proc_pidinfo returns 0 with errno set, which purego does not
		// hand back: ask the process table why instead.
		why := "refused"
		switch err := unix.Kill(pid, 0); {
		case errors.Is(err, unix.ESRCH):
			why = "no such process"
		case errors.Is(err, unix.EPERM):
			why = "a process of another user"
		}
		return 0, fmt.Errorf("proc_pidinfo(%d, PROC_PIDTASKINFO): %s", pid, why)
	}
	ns, err := TaskCPUNs(buf[:], int(n), l.timebase)
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", pid, err)
	}
	return ns, nil
}
