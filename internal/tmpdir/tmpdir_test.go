package tmpdir

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A directory whose owner died (a real process that ran and exited) is
// swept; one whose owner lives, one whose pid now belongs to another
// process, and one without an owner file are told apart.
func TestSweepRemovesOnlyOrphans(t *testing.T) {
	parent := t.TempDir()
	mk := func(name, owner string) string {
		d := filepath.Join(parent, name)
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "scratch.raw"), []byte("x"), 0o644))
		if owner != "" {
			require.NoError(t, os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o600))
		}
		return d
	}
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	deadPID := dead.Process.Pid

	me := os.Getpid()
	orphan := mk("qoslab-vm-1", fmt.Sprintf("%d %d\n", deadPID, 12345))
	mine := mk("qoslab-vm-2", fmt.Sprintf("%d %d\n", me, startTime(me)))
	unknown := mk("qoslab-vm-3", "")
	other := mk("other-4", fmt.Sprintf("%d 1\n", deadPID))
	removed := sweepIn(parent, "qoslab-vm-")
	assert.Equal(t, []string{orphan}, removed)
	assert.NoDirExists(t, orphan)
	assert.DirExists(t, mine, "its owner lives")
	assert.DirExists(t, unknown, "no owner file: not ours to judge")
	assert.DirExists(t, other, "another prefix")

	if startTime(me) != 0 {
		reused := mk("qoslab-vm-5", fmt.Sprintf("%d %d\n", me, startTime(me)+1))
		assert.Equal(t, []string{reused}, sweepIn(parent, "qoslab-vm-"), "the pid lives, but as another process (another start time)")
	}
}

func TestMakeWritesItsOwner(t *testing.T) {
	dir, err := Make("qoslab-test-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d %d\n", os.Getpid(), startTime(os.Getpid())), string(b))
	assert.False(t, ownerGone(dir))
}
