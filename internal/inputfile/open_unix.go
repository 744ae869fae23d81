//go:build unix

package inputfile

import "syscall"

// openNonBlocking makes open return at once on a named pipe with no writer.
const openNonBlocking = syscall.O_NONBLOCK
