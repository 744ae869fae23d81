//go:build !unix

package inputfile

// openNonBlocking: no named pipes to block on.
const openNonBlocking = 0
