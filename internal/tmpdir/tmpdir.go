// Package tmpdir makes the temporary directories qoslab's processes work in
// (a VM's sockets and sparse scratch disk, an agent's scratch) so that the
// ones a killed process left behind can be found and removed later: each
// holds an owner file naming the process that made it.
package tmpdir

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ownerFile is the file in each directory that names its owner: the pid and
// the process's start time (Linux: clock ticks since boot; 0 elsewhere), so
// a pid reused by another process is not taken for the owner.
const ownerFile = ".qoslab-owner"

// Make creates a new directory in the system's temporary directory, named
// from pattern (as os.MkdirTemp takes it), owned by this process.
func Make(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	pid := os.Getpid()
	owner := fmt.Sprintf("%d %d\n", pid, startTime(pid))
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Sweep removes the directories in the system's temporary directory whose
// names start with prefix, that this user owns and whose owner process is
// gone (killed with -9, say, before it could clean up). A directory that is
// a symbolic link, belongs to another user, has no owner file or one that
// is not this user's own regular file, or whose owner lives, is left
// alone: in a shared /tmp anyone can make a directory with a qoslab name
// and a forged owner file. It returns what it removed.
func Sweep(prefix string) []string {
	return sweepIn(os.TempDir(), prefix)
}

func sweepIn(parent, prefix string) []string {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if ownerGone(dir) {
			if err := os.RemoveAll(dir); err == nil {
				removed = append(removed, dir)
			}
		}
	}
	return removed
}

// maxOwnerFile bounds what is read of an owner file: a pid and a number.
const maxOwnerFile = 256

// ownerGone reports whether dir is this user's own directory (not a
// symbolic link) whose owner process, named by an owner file that is this
// user's own regular file, has ended: false when it cannot tell.
func ownerGone(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || !ownedByMe(fi) {
		return false
	}
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDONLY|openNoFollow|openNonBlocking, 0) //nolint:gosec // G304: the owner file in a temporary directory of qoslab's
	if err != nil {
		return false
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil || !ofi.Mode().IsRegular() || !ownedByMe(ofi) {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxOwnerFile))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return false
	}
	pid, err1 := strconv.Atoi(fields[0])
	start, err2 := strconv.ParseUint(fields[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return false
	}
	if !alive(pid) {
		return true
	}
	// The pid lives; it is the owner unless its start time says another
	// process took the pid since.
	now := startTime(pid)
	return start != 0 && now != 0 && now != start
}
