//go:build unix

package tmpdir

import (
	"io/fs"
	"os"
	"syscall"
)

// An owner file that is a symbolic link is refused (ELOOP); a named pipe
// does not block.
const (
	openNoFollow    = syscall.O_NOFOLLOW
	openNonBlocking = syscall.O_NONBLOCK
)

// ownedByMe reports whether this process's effective user owns fi.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
