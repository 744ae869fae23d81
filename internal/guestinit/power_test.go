package guestinit

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHasKey(t *testing.T) {
	tests := []struct {
		name string
		caps string
		key  int
		want bool
	}{
		// QEMU virt's gpio-keys: KEY_POWER only (116 = word 1, bit 52).
		{"gpio-keys", "10000000000000 0", keyPower, true},
		// The ACPI power button, as /sys shows it on x86.
		{"ACPI power button", "10000000000000 0\n", keyPower, true},
		// An AT keyboard (which has KEY_POWER), and the same without bit
		// 52 of its second-last word.
		{"a keyboard with KEY_POWER", "402000000 3803078f800d001 feffffdfffefffff fffffffffffffffe", keyPower, true},
		{"a keyboard without it", "402000000 3803078f800d001 feefffdfffefffff fffffffffffffffe", keyPower, false},
		{"no keys", "0", keyPower, false},
		{"too few words", "1", keyPower, false},
		{"not hex", "zz 0", keyPower, false},
		{"bit 0", "1", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, hasKey(tt.caps, tt.key))
		})
	}
}

// inputEvent is one struct input_event as a 64-bit kernel writes it.
func inputEvent(typ, code uint16, value int32) []byte {
	b := make([]byte, inputEventSize)
	binary.LittleEndian.PutUint64(b[0:], 1700000000)
	binary.LittleEndian.PutUint64(b[8:], 42)
	binary.LittleEndian.PutUint16(b[16:], typ)
	binary.LittleEndian.PutUint16(b[18:], code)
	binary.LittleEndian.PutUint32(b[20:], uint32(value))
	return b
}

func join(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestPowerPressed(t *testing.T) {
	const evSyn = 0
	tests := []struct {
		name   string
		events []byte
		want   bool
	}{
		{"press then sync", join(inputEvent(evKey, keyPower, 1), inputEvent(evSyn, 0, 0)), true},
		{"release", join(inputEvent(evKey, keyPower, 0), inputEvent(evSyn, 0, 0)), false},
		{"autorepeat", inputEvent(evKey, keyPower, 2), false},
		{"another key", inputEvent(evKey, 30, 1), false},
		{"KEY_POWER's code under another type", inputEvent(0x02, keyPower, 1), false},
		{"a press after other events", join(inputEvent(evSyn, 0, 0), inputEvent(evKey, 30, 0), inputEvent(evKey, keyPower, 1)), true},
		{"a torn event is not read", inputEvent(evKey, keyPower, 1)[:inputEventSize-1], false},
		{"nothing", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, powerPressed(tt.events))
		})
	}
}

// fakeInput makes ClassDir/eventN/device with a name and key capabilities,
// as sysfs has them.
func fakeInput(t *testing.T, classDir, event, name, keys string) {
	t.Helper()
	dir := filepath.Join(classDir, event, "device")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "capabilities"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "name"), []byte(name+"\n"), 0o644))
	if keys != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "capabilities", "key"), []byte(keys+"\n"), 0o644))
	}
}

func TestPowerButtons(t *testing.T) {
	root := t.TempDir()
	f := inputFinder{ClassDir: filepath.Join(root, "class"), DevDir: filepath.Join(root, "dev")}
	got, err := f.PowerButtons()
	require.NoError(t, err, "no input class yet is no buttons")
	assert.Empty(t, got)

	fakeInput(t, f.ClassDir, "event1", "Power Button", "10000000000000 0")
	fakeInput(t, f.ClassDir, "event0", "gpio-keys", "10000000000000 0")
	fakeInput(t, f.ClassDir, "event2", "a keypad", "402000000 3803078f800d001 feefffdfffefffff fffffffffffffffe")
	fakeInput(t, f.ClassDir, "event3", "a mouse", "")
	// The input device itself sits beside its event handler in the class.
	fakeInput(t, f.ClassDir, "input0", "gpio-keys", "10000000000000 0")

	got, err = f.PowerButtons()
	require.NoError(t, err)
	assert.Equal(t, []powerButton{
		{Dev: filepath.Join(f.DevDir, "event0"), Name: "gpio-keys"},
		{Dev: filepath.Join(f.DevDir, "event1"), Name: "Power Button"},
	}, got)
}

// A press read from the device node reaches init; a release does not.
func TestWatchPowerButtons(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join(dir, "event0")
	require.NoError(t, syscall.Mkfifo(node, 0o600))
	b := powerButton{Dev: node, Name: "gpio-keys"}
	pressed := make(chan powerButton, 1)

	// Opening a FIFO for reading waits for a writer.
	type result struct {
		watched []powerButton
		err     error
	}
	done := make(chan result, 1)
	go func() {
		w, err := watchPowerButtons([]powerButton{b, {Dev: filepath.Join(dir, "missing"), Name: "gone"}}, pressed)
		done <- result{w, err}
	}()
	dev, err := os.OpenFile(node, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer dev.Close()
	r := <-done
	assert.Equal(t, []powerButton{b}, r.watched)
	assert.ErrorContains(t, r.err, "missing", "a button that cannot be opened is said")

	_, err = dev.Write(join(inputEvent(evKey, keyPower, 0), inputEvent(0, 0, 0)))
	require.NoError(t, err)
	select {
	case got := <-pressed:
		t.Fatalf("a release counted as a press of %s", got)
	case <-time.After(100 * time.Millisecond):
	}
	_, err = dev.Write(join(inputEvent(evKey, keyPower, 1), inputEvent(0, 0, 0)))
	require.NoError(t, err)
	select {
	case got := <-pressed:
		assert.Equal(t, b, got)
	case <-time.After(10 * time.Second):
		t.Fatal("the press did not reach init")
	}
}
