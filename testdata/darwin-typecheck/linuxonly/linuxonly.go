//go:build linux

// Package linuxonly has no file for darwin, so ./... for darwin skips it and
// its mistake is not reported.
package linuxonly

// Undefined calls a function that does not exist.
func Undefined() {
	noSuchFunction() // want:linux `undefined: noSuchFunction`
}
