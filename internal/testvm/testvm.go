// Package testvm decides what a test does when something that booting a VM
// needs (QEMU, a guest kernel, a device's daemon) is missing here: the test
// is skipped, saying why, except where the VM tests are asked for with
// QOSLAB_REQUIRE_VM=1 (CI sets it, and make setup and make test-deps
// install what they need): there the test fails, so that CI cannot pass by
// skipping them. It also marks the slow tests (VM boots, the fleet, builds
// of the binaries, anything over a few seconds), which go test -short
// skips (Slow).
package testvm

import (
	"os"
	"os/exec"
	"testing"
)

// requireEnv is the variable that, set to 1, makes a missing prerequisite of a VM
// test a failure instead of a skip.
const requireEnv = "QOSLAB_REQUIRE_VM"

// required reports whether the VM tests are asked for (QOSLAB_REQUIRE_VM=1).
func required() bool { return os.Getenv(requireEnv) == "1" }

// Missing ends the test for a prerequisite that is missing: skipped with
// why, or with QOSLAB_REQUIRE_VM=1 failed with why and fix (what installs
// it, e.g. "run scripts/setup.sh").
func Missing(t testing.TB, why, fix string) {
	t.Helper()
	if required() {
		t.Fatalf("%s=1 but %s (%s)", requireEnv, why, fix)
		return // Fatalf does not return, but a recording testing.TB may
	}
	t.Skip(why)
}

// LookPath returns the path of the program name, or ends the test as
// Missing does when it is not installed.
func LookPath(t testing.TB, name, fix string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "no "+name, fix)
	}
	return p
}
