// Package testdisk mounts small disks for tests of what qoslab does when a
// disk fills: on Linux, as root, a tmpfs of a given size.
package testdisk
