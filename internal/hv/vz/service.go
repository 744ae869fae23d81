package vz

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// serviceName is the process that runs a VM's vCPUs on a Mac:
// Virtualization.framework's XPC service
// (Virtualization.framework/XPCServices/com.apple.Virtualization.VirtualMachine.xpc),
// one per started VM, launched for the process that made the VM and run
// as its user. Its threads, not the vz host's, are the ones the host's
// scheduler sees run the guest.
const serviceName = "com.apple.Virtualization.VirtualMachine"

// serviceCommLen is how much of a process's name the kernel's process
// table keeps (p_comm, MAXCOMLEN): the service's is cut to its first 16
// bytes, so a process is a candidate when its p_comm is a prefix of the
// name, and its executable's path then decides.
const serviceCommLen = 16

// process is one entry of the host's process table, as much as the
// search for the service needs.
type process struct {
	PID  int
	UID  int
	Comm string
	// Path is the process's executable (kern.procargs2); "" when it could
	// not be read.
	Path string
}

// mayBeService says whether p's truncated name could be the service's.
func (p process) mayBeService() bool {
	return p.Comm != "" && strings.HasPrefix(serviceName, p.Comm) && len(p.Comm) >= min(serviceCommLen, len(serviceName))
}

// isService says whether p is a service process.
func (p process) isService() bool {
	return p.mayBeService() && filepath.Base(p.Path) == serviceName
}

// findService picks the service process a VM's start launched: a service
// process of user uid in after (the process table once the VM runs) that
// was not in before (the table before the VM was made). None, or more
// than one (another VM of the same user started at the same moment), is
// an error that says what was seen: the wrong process is never guessed.
func findService(before, after []process, uid int) (int, error) {
	old := map[int]bool{}
	for _, p := range before {
		old[p.PID] = true
	}
	var found []int
	others := 0
	for _, p := range after {
		switch {
		case !p.isService():
		case old[p.PID]:
			others++
		case p.UID != uid:
			others++
		default:
			found = append(found, p.PID)
		}
	}
	slices.Sort(found)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return 0, fmt.Errorf("no new %s process of uid %d appeared when the VM started (%d other such processes: other VMs, or other users')", serviceName, uid, others)
	}
	return 0, fmt.Errorf("%d new %s processes of uid %d appeared when the VM started (pids %v): another VM started at the same moment, and which one runs this VM cannot be told", len(found), serviceName, uid, found)
}

// execPath reads the executable's path from a kern.procargs2 sysctl's
// bytes: the argument count (a 32-bit int, little-endian on Apple
// silicon and Intel Macs), then the path the process was executed from,
// NUL-terminated.
func execPath(procargs2 []byte) (string, error) {
	if len(procargs2) < 4 {
		return "", fmt.Errorf("kern.procargs2: %d bytes, want at least 4 (the argument count)", len(procargs2))
	}
	rest := procargs2[4:]
	end := bytes.IndexByte(rest, 0)
	if end <= 0 {
		return "", fmt.Errorf("kern.procargs2: no NUL-terminated executable path after argc %d", binary.LittleEndian.Uint32(procargs2))
	}
	return string(rest[:end]), nil
}
