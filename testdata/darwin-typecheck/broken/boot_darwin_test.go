package broken

import "testing"

// TestStart calls startVM with too many arguments; only checked with -test.
func TestStart(t *testing.T) {
	if err := startVM(nil, 0, true); err == nil { // want:test `too many arguments in call to startVM`
		t.Fatal("started a nil machine")
	}
}
