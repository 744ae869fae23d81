//go:build !unix

package results

import "os"

// tryLock cannot lock off unix: every run is let through, as before locks.
func tryLock(*os.File) (bool, error) { return true, nil }
