//go:build !linux && !darwin

package hostview

import "runtime"

// sysReader reads nothing where the host view has no reader yet.
type sysReader struct{}

func (sysReader) read(r *Reader, t Target, s *Snapshot) {
	s.At = r.now()
	s.HostCPUs = runtime.NumCPU()
	s.Notes = append(s.Notes, "the host view is read on Linux only: not recorded on "+runtime.GOOS)
}

func (sysReader) Close() {}
