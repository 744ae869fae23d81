package procsched

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Read reads this process's nice; macOS has no cgroups, and a process's
// QoS is its threads' (each of qoslab's measuring threads sets its own).
func Read() Scheduling {
	var s Scheduling
	n, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		s.Unread = append(s.Unread, fmt.Sprintf("nice: %v", err))
	}
	s.Nice = n
	return s
}
