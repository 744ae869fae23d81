// Package flock takes exclusive flock(2) locks without waiting, on unix (a
// leaf). flock, not fcntl: the lock belongs to the open file, not to the
// process, so a second open of the file in the same process is refused too,
// and closing another descriptor of the file does not let it go. Off unix
// the package has nothing; its callers are unix files.
package flock
