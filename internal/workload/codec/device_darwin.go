package codec

import (
	"os"

	"golang.org/x/sys/unix"
)

// From <sys/disk.h>: _IOR('d', 24, uint32_t) and _IOR('d', 25, uint64_t).
const (
	dkiocGetBlockSize  = 0x40046418
	dkiocGetBlockCount = 0x40086419
)

// deviceSize asks the kernel for a block device's size in bytes. The ioctls
// write a uint32 and a uint64 into an int, which is 64 bits on every darwin
// Go supports.
func deviceSize(f *os.File) (int64, error) {
	fd := int(f.Fd())
	blockSize, err := unix.IoctlGetInt(fd, dkiocGetBlockSize)
	if err != nil {
		return 0, err
	}
	blocks, err := unix.IoctlGetInt(fd, dkiocGetBlockCount)
	if err != nil {
		return 0, err
	}
	return int64(uint32(blockSize)) * int64(blocks), nil
}
