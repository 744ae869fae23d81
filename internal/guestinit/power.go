package guestinit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The input event codes the power button sends (linux/input-event-codes.h).
const (
	evKey    = 0x01
	keyPower = 116
)

// inputEventSize is struct input_event on a 64-bit kernel: a timeval (two
// 64-bit words), then the type and code (16 bits each) and the value (32
// bits). qoslab's guests are amd64 and arm64.
const inputEventSize = 24

// powerButton is an input device whose keys include KEY_POWER: the ACPI
// power button (x86 machines, and arm64 ones booted with ACPI) or a
// gpio-keys button (arm64 machines described by a device tree, such as
// QEMU's virt, whose power button is a PL061 GPIO line).
type powerButton struct {
	// Dev is the event device node (/dev/input/event0).
	Dev string
	// Name is the device's name ("gpio-keys", "Power Button").
	Name string
}

func (b powerButton) String() string { return fmt.Sprintf("%s (%s)", b.Dev, b.Name) }

// inputFinder finds input event devices in a sysfs-like tree:
// ClassDir/eventN/device/{name,capabilities/key} describe the device and
// DevDir/eventN is its node.
type inputFinder struct {
	ClassDir string
	DevDir   string
}

// PowerButtons lists the event devices that can send KEY_POWER. A missing
// class directory is none (the input core makes it when a device
// registers).
func (f inputFinder) PowerButtons() ([]powerButton, error) {
	entries, err := os.ReadDir(f.ClassDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("input devices: %w", err)
	}
	var out []powerButton
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "event") {
			continue
		}
		dir := filepath.Join(f.ClassDir, e.Name(), "device")
		caps, err := os.ReadFile(filepath.Join(dir, "capabilities", "key")) //nolint:gosec // G304: a file of the kernel's input class directory (sysfs)
		if err != nil {
			continue // not a device with keys
		}
		if !hasKey(string(caps), keyPower) {
			continue
		}
		name, _ := os.ReadFile(filepath.Join(dir, "name")) //nolint:gosec // G304: a file of the kernel's input class directory (sysfs)
		out = append(out, powerButton{Dev: filepath.Join(f.DevDir, e.Name()), Name: strings.TrimSpace(string(name))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dev < out[j].Dev })
	return out, nil
}

// hasKey tells whether an input device's key capabilities, as sysfs shows
// them, include key: words of the kernel's unsigned long (64 bits here) in
// hex, the most significant first ("100000 0 0 0" has bit 116).
func hasKey(caps string, key int) bool {
	words := strings.Fields(caps)
	i := len(words) - 1 - key/64
	if key < 0 || i < 0 {
		return false
	}
	w, err := strconv.ParseUint(words[i], 16, 64)
	return err == nil && w&(1<<(key%64)) != 0
}

// powerPressed tells whether events (whole struct input_event records, in
// the machine's byte order, little endian on amd64 and arm64) hold a press
// of KEY_POWER. A release or an autorepeat is not a press.
func powerPressed(events []byte) bool {
	for len(events) >= inputEventSize {
		ev := events[:inputEventSize]
		events = events[inputEventSize:]
		typ := binary.LittleEndian.Uint16(ev[16:])
		code := binary.LittleEndian.Uint16(ev[18:])
		value := int32(binary.LittleEndian.Uint32(ev[20:]))
		if typ == evKey && code == keyPower && value == 1 {
			return true
		}
	}
	return false
}

// watchPowerButtons reads every button's events and sends the button on
// pressed each time it is pressed (dropped when a press is still waiting
// to be taken). It returns the buttons it watches; one that cannot be
// opened is left out and its error returned beside the others.
func watchPowerButtons(buttons []powerButton, pressed chan<- powerButton) ([]powerButton, error) {
	var watched []powerButton
	var errs []error
	for _, b := range buttons {
		f, err := os.Open(b.Dev)
		if err != nil {
			errs = append(errs, fmt.Errorf("power button %s: %w", b, err))
			continue
		}
		watched = append(watched, b)
		go readPowerButton(f, b, pressed)
	}
	return watched, errors.Join(errs...)
}

// readPowerButton reads r's events for the guest's life: PID 1 never
// closes it.
func readPowerButton(r io.Reader, b powerButton, pressed chan<- powerButton) {
	// The event device returns whole events, as many as fit.
	buf := make([]byte, 64*inputEventSize)
	for {
		n, err := r.Read(buf)
		if n > 0 && powerPressed(buf[:n-n%inputEventSize]) {
			select {
			case pressed <- b:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}
