//go:build darwin

package hostview

import (
	"fmt"
	"runtime"
)

// sysReader reads, on macOS, the VM's process alone: the Virtualization
// framework's service process, whose threads are the vCPUs (proc_pidinfo's
// task info, allowed for a process of the same user). The vCPU threads are
// not the controller's to name and other processes are not walked, so
// the Use holds the VM's process and says what it leaves out.
type sysReader struct{}

func (sysReader) read(r *Reader, t Target, s *Snapshot) {
	s.At = r.now()
	s.HostCPUs = runtime.NumCPU()
	s.Notes = append(s.Notes, "macOS: the host view holds the VM's service process; vCPU threads and other processes are not read")
	if t.PID <= 0 {
		return
	}
	s.VMPID = t.PID
	ns, err := ProcessCPUTime(t.PID)
	if err != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("VM process %d: %v", t.PID, err))
		return
	}
	s.VMNs, s.VMRead = ns, true
}

func (sysReader) Close() {}
