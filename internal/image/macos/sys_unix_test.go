//go:build unix

package macos

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// holdLockEnv makes the test binary act as tart running a VM: it holds an
// fcntl write lock on the file named, as PIDLock.swift does, until stdin
// closes.
const holdLockEnv = "QOSLAB_TEST_HOLD_TART_LOCK"

func TestMain(m *testing.M) {
	if p := os.Getenv(holdLockEnv); p != "" {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestInspectTartRefusesARunningVM(t *testing.T) {
	dir := copyTart(t, "tart-sonoma")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+filepath.Join(dir, "config.json"))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked", strings.TrimSpace(line))

	_, err = inspectTart(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("it is running (tart pid %d)", cmd.Process.Pid))
	assert.Contains(t, err.Error(), "tart stop")

	stdin.Close()
	require.NoError(t, cmd.Wait())
	_, err = inspectTart(dir)
	assert.NoError(t, err, "a stopped VM imports")
}
