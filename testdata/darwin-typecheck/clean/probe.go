//go:build linux

package clean

// linuxCPUs holds a deliberate mistake in a file that only builds on Linux:
// checking for darwin must not report it (the Linux control test does).
func linuxCPUs() int {
	return "not a number" // want:linux `cannot use "not a number" \(untyped string constant\) as int value in return statement`
}
