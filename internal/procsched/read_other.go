//go:build !linux && !darwin

package procsched

// Read has nothing to read on this OS.
func Read() Scheduling {
	return Scheduling{Unread: []string{"scheduling: not read on this OS"}}
}
