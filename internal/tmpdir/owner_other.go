//go:build !unix

package tmpdir

import "io/fs"

const (
	openNoFollow    = 0
	openNonBlocking = 0
)

// ownedByMe cannot tell off unix: nothing is taken for this user's.
func ownedByMe(fs.FileInfo) bool { return false }
