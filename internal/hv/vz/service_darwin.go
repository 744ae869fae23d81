//go:build darwin && arm64 && cgo

package vz

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// serviceProcesses lists the processes whose p_comm could be the
// framework's service, with their user and executable (read with the
// kern.procargs2 sysctl, which a process may read of its own user's
// processes; another user's is left without a path, and so never taken
// for the service).
func serviceProcesses() ([]process, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("list processes (sysctl kern.proc.all): %w", err)
	}
	var out []process
	for _, kp := range kps {
		p := process{
			PID:  int(kp.Proc.P_pid),
			UID:  int(kp.Eproc.Ucred.Uid),
			Comm: unix.ByteSliceToString(kp.Proc.P_comm[:]),
		}
		if !p.mayBeService() {
			continue
		}
		if b, err := unix.SysctlRaw("kern.procargs2", p.PID); err == nil {
			p.Path, _ = execPath(b)
		}
		out = append(out, p)
	}
	return out, nil
}
