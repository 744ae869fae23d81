//go:build !darwin

package telemetry

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewPowermetricsProbeOffMacOS(t *testing.T) {
	p, err := newPowermetricsProbe(context.Background(), 0)
	assert.Nil(t, p)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, SamplerPowermetrics, ue.Sampler)
	assert.Contains(t, err.Error(), "only on macOS")
}
