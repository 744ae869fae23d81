//go:build !darwin

package signing

import (
	"context"

	"github.com/qoslab/qoslab/internal/hv"
)

// CheckHost returns no checks: code signing and Virtualization.framework
// exist only on macOS.
func CheckHost(ctx context.Context) []hv.Check { return nil }
