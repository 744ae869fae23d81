package codec

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deviceSize asks the kernel for a block device's size in bytes.
func deviceSize(f *os.File) (int64, error) {
	var size uint64
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&size))) //nolint:gosec // G103: BLKGETSIZE64 writes the size through this pointer
	if errno != 0 {
		return 0, errno
	}
	return int64(size), nil
}
