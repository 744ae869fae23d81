package testvm

import "testing"

// Slow marks a test that boots a VM, runs the fleet playbook, builds the
// binaries or otherwise takes more than a few seconds: go test -short (the
// fast loop, docs/development.md) skips it, saying why. Without -short it
// runs, and a missing QEMU or kernel is Missing's to decide.
func Slow(t testing.TB, why string) {
	t.Helper()
	slow(t, testing.Short(), why)
}

func slow(t testing.TB, short bool, why string) {
	t.Helper()
	if short {
		t.Skip(why + ": not in -short")
	}
}
