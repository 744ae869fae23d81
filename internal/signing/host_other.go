//go:build !darwin

package signing

import (
	"context"
)

// CheckHost returns no checks: code signing and Virtualization.framework
// exist only on macOS.
func CheckHost(ctx context.Context) []Check { return nil }
