//go:build unix

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

// In a shared temporary directory anyone can make a directory named like
// an agent's, with a forged owner file naming a dead process: the sweep
// removes only this user's own directories, never through a symbolic link.
func TestSweepLeavesWhatIsNotThisUsersOwn(t *testing.T) {
	parent := t.TempDir()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	forged := fmt.Sprintf("%d %d\n", dead.Process.Pid, 12345)
	mk := func(name string) string {
		d := filepath.Join(parent, name)
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "data"), []byte("theirs"), 0o644))
		return d
	}

	// A symbolic link named like an agent's directory, to a directory
	// holding a forged owner file.
	target := mk("elsewhere")
	require.NoError(t, os.WriteFile(filepath.Join(target, ownerFile), []byte(forged), 0o600))
	link := filepath.Join(parent, "qoslab-vm-link")
	require.NoError(t, os.Symlink(target, link))

	// An owner file that is a symbolic link to a forged one.
	linkedOwner := mk("qoslab-vm-linked-owner")
	require.NoError(t, os.Symlink(filepath.Join(target, ownerFile), filepath.Join(linkedOwner, ownerFile)))

	// An owner file that is a named pipe: not read, and nothing blocks.
	fifoOwner := mk("qoslab-vm-fifo-owner")
	require.NoError(t, mkfifo(filepath.Join(fifoOwner, ownerFile)))

	var otherUsers []string
	if os.Geteuid() == 0 {
		// Root can make what another user would: a directory and owner
		// file owned by nobody (65534).
		theirs := mk("qoslab-vm-theirs")
		require.NoError(t, os.WriteFile(filepath.Join(theirs, ownerFile), []byte(forged), 0o600))
		require.NoError(t, os.Chown(theirs, 65534, 65534))
		require.NoError(t, os.Chown(filepath.Join(theirs, ownerFile), 65534, 65534))
		// This user's directory with another user's owner file in it.
		mixed := mk("qoslab-vm-mixed")
		require.NoError(t, os.WriteFile(filepath.Join(mixed, ownerFile), []byte(forged), 0o600))
		require.NoError(t, os.Chown(filepath.Join(mixed, ownerFile), 65534, 65534))
		otherUsers = []string{theirs, mixed}
	}

	// And one that is truly this user's orphan.
	orphan := mk("qoslab-vm-orphan")
	require.NoError(t, os.WriteFile(filepath.Join(orphan, ownerFile), []byte(forged), 0o600))

	assert.Equal(t, []string{orphan}, sweepIn(parent, "qoslab-vm-"))
	assert.FileExists(t, filepath.Join(target, "data"), "not removed through the link")
	for _, d := range append([]string{linkedOwner, fifoOwner}, otherUsers...) {
		assert.DirExists(t, d)
	}
	if len(otherUsers) == 0 {
		t.Log("not root: another user's directory could not be made; the rest was checked")
	}
}
