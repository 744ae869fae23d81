// Package clean boots a Linux guest through vzshape the right way, with cgo
// in its darwin file as an hv/vz backend would have: the checker must find
// nothing here.
package clean

import "fmt"

// Spec is the portable description of a machine.
type Spec struct {
	CPUs      uint
	MemoryMiB uint64
	Kernel    string
	Initrd    string
	CmdLine   string
}

// Validate reports what is wrong with s.
func (s Spec) Validate() error {
	if s.CPUs == 0 || s.MemoryMiB == 0 || s.Kernel == "" {
		return fmt.Errorf("spec %+v: need CPUs, MemoryMiB and Kernel", s)
	}
	return nil
}
