//go:build linux || darwin

package transport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openSerial opens a character device read/write and, when it is a tty, puts
// it in raw mode. O_NONBLOCK keeps open from waiting for a modem carrier and
// lets Go's poller serve the file, so Close interrupts a pending Read.
func openSerial(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK, 0) //nolint:gosec // G304: the serial port the guest's configuration names
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("serial device: %w (is the port configured in the VM? look for /dev/vport*, /dev/hvc*, /dev/ttyS*)", err)
		}
		return nil, fmt.Errorf("serial device: %w", err)
	}
	if err := makeRaw(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("serial device %s: raw mode: %w", path, err)
	}
	return f, nil
}

// makeRaw puts a tty in raw mode and leaves other devices (a virtio-serial
// port such as /dev/vport0p1 is not a tty) as they are.
func makeRaw(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioctlErr error
	// Control rather than f.Fd, which would put the file back in blocking
	// mode and take it away from the poller.
	err = rc.Control(func(fd uintptr) {
		t, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
		if errors.Is(err, unix.ENOTTY) {
			return
		}
		if err != nil {
			ioctlErr = err
			return
		}
		setRaw(t)
		ioctlErr = unix.IoctlSetTermios(int(fd), ioctlSetTermios, t)
	})
	return errors.Join(err, ioctlErr)
}

// setRaw does what cfmakeraw(3) does, and also turns off software flow
// control and modem control lines: gRPC's bytes must pass untouched, with
// no echo, in 8 bits, each read returning as soon as one byte is there.
func setRaw(t *unix.Termios) {
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF | unix.IXANY
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8 | unix.CREAD | unix.CLOCAL
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
}
