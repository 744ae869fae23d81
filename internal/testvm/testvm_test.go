package testvm

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a test whose end is recorded instead of happening.
type recorder struct {
	testing.TB
	ended string // "skip: ..." or "fail: ..."
}

func (r *recorder) Helper()          {}
func (r *recorder) Skip(args ...any) { r.ended = "skip: " + fmt.Sprint(args...) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.ended = "fail: " + fmt.Sprintf(format, args...)
}

func TestMissingSkipsUnlessRequired(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"", "skip: no qemu-system-x86_64"},
		{"0", "skip: no qemu-system-x86_64"},
		{"1", "fail: QOSLAB_REQUIRE_VM=1 but no qemu-system-x86_64 (run scripts/setup.sh)"},
	} {
		t.Setenv(requireEnv, tc.env)
		r := &recorder{TB: t}
		Missing(r, "no qemu-system-x86_64", "run scripts/setup.sh")
		assert.Equal(t, tc.want, r.ended, "%s=%q", requireEnv, tc.env)
	}
}

func TestLookPath(t *testing.T) {
	bin := t.TempDir()
	prog := filepath.Join(bin, "qemu-fake")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", bin)
	t.Setenv(requireEnv, "1")

	r := &recorder{TB: t}
	assert.Equal(t, prog, LookPath(r, "qemu-fake", "install it"))
	assert.Empty(t, r.ended, "an installed program ends nothing")

	LookPath(r, "qemu-nonesuch", "install it")
	assert.Equal(t, "fail: QOSLAB_REQUIRE_VM=1 but no qemu-nonesuch (install it)", r.ended)
}

// QOSLAB_REQUIRE_FLEET asks for the fleet test's tools, and only for
// those: each variable makes its own tests fail, not the other's.
func TestMissingFleetToolSkipsUnlessTheFleetIsRequired(t *testing.T) {
	for _, tc := range []struct{ vm, fleet, want, wantVM string }{
		{"", "", "skip: no sshd", "skip: no qemu"},
		{"1", "", "skip: no sshd", "fail: QOSLAB_REQUIRE_VM=1 but no qemu (run make setup)"},
		{"", "1", "fail: QOSLAB_REQUIRE_FLEET=1 but no sshd (run make test-deps)", "skip: no qemu"},
	} {
		t.Setenv(requireEnv, tc.vm)
		t.Setenv(requireFleetEnv, tc.fleet)
		r := &recorder{TB: t}
		MissingFleetTool(r, "no sshd", "run make test-deps")
		assert.Equal(t, tc.want, r.ended, "VM %q, fleet %q", tc.vm, tc.fleet)
		Missing(r, "no qemu", "run make setup")
		assert.Equal(t, tc.wantVM, r.ended, "VM %q, fleet %q", tc.vm, tc.fleet)
	}
}

func TestSlowIsSkippedByShortAlone(t *testing.T) {
	for _, required := range []string{"", "1"} {
		t.Setenv(requireEnv, required)
		r := &recorder{TB: t}
		slow(r, true, "boots a VM")
		assert.Equal(t, "skip: boots a VM: not in -short", r.ended, "-short skips it, %s=%q too", requireEnv, required)

		r = &recorder{TB: t}
		slow(r, false, "boots a VM")
		assert.Empty(t, r.ended, "without -short it runs")
	}
}
