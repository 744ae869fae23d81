// Package testvm decides what a test does when something that booting a VM
// needs (QEMU, a guest kernel, a device's daemon) is missing here: the test
// is skipped, saying why, except where the VM tests are asked for with
// QOSLAB_REQUIRE_VM=1 (CI sets it, and make setup and make test-deps
// install what they need): there the test fails, so that CI cannot pass by
// skipping them. The fleet test's tools are asked for the same way with
// QOSLAB_REQUIRE_FLEET=1. These variables, and QOSLAB_KERNEL_CACHE, are
// read here only (docs/environment.md lists them as the tests').
// It also marks the slow tests (VM boots, the fleet, builds of the
// binaries, anything over a few seconds), which go test -short skips (Slow).
package testvm

import (
	"os"
	"os/exec"
	"testing"

	"github.com/qoslab/qoslab/internal/config"
)

// The variables that, set to 1, make a missing prerequisite of a VM test
// (requireEnv) or of the fleet test (requireFleetEnv) a failure instead of
// a skip; kernelCacheEnv points the VM tests at another kernel cache.
const (
	requireEnv      = "QOSLAB_REQUIRE_VM"
	requireFleetEnv = "QOSLAB_REQUIRE_FLEET"
	kernelCacheEnv  = "QOSLAB_KERNEL_CACHE"
)

// required reports whether the tests the variable env names are asked
// for (env=1).
func required(env string) bool { return os.Getenv(env) == "1" }

// Missing ends the test for a prerequisite that is missing: skipped with
// why, or with QOSLAB_REQUIRE_VM=1 failed with why and fix (what installs
// it, e.g. "run scripts/setup.sh").
func Missing(t testing.TB, why, fix string) { t.Helper(); missing(t, requireEnv, why, fix) }

// MissingFleetTool ends the fleet test for a tool it lacks, as Missing
// does, failing where QOSLAB_REQUIRE_FLEET=1 asks for the fleet test.
func MissingFleetTool(t testing.TB, why, fix string) {
	t.Helper()
	missing(t, requireFleetEnv, why, fix)
}

func missing(t testing.TB, env, why, fix string) {
	t.Helper()
	if required(env) {
		t.Fatalf("%s=1 but %s (%s)", env, why, fix)
		return // Fatalf does not return, but a recording testing.TB may
	}
	t.Skip(why)
}

// KernelCache is the kernel cache QOSLAB_KERNEL_CACHE points the VM tests
// at; "" for the user's own (image.DefaultKernelCacheDir).
func KernelCache() string { return os.Getenv(kernelCacheEnv) }

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

// VhostVsockDirs are where a VM test looks for vhost-device-vsock when
// PATH lacks it: cargo's bin directory, found as qoslab's configuration
// finds it (config.CargoBin; qemu.Options.VhostVsockDirs).
func VhostVsockDirs() []string {
	if d := config.CargoBin(os.Getenv); d != "" {
		return []string{d}
	}
	return nil
}
