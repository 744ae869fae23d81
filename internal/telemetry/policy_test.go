package telemetry

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPolicyText(t *testing.T) {
	for _, tc := range []struct{ policy, want string }{
		{"SCHED_OTHER nice=-10", "user-interactive (SCHED_OTHER, nice -10)"},
		{"SCHED_OTHER nice=-5", "user-initiated (SCHED_OTHER, nice -5)"},
		{"SCHED_OTHER nice=0", "default (SCHED_OTHER, nice 0)"},
		{"SCHED_BATCH nice=10", "utility (SCHED_BATCH, nice 10)"},
		{"SCHED_IDLE nice=10", "background (SCHED_IDLE)"},
		{"SCHED_IDLE nice=0", "background (SCHED_IDLE)"},
		{"SCHED_OTHER nice=3", "SCHED_OTHER, nice 3"},
		{"SCHED_FIFO rtprio=10 nice=0", "SCHED_FIFO, real-time priority 10"},
		{"garbled", "garbled"},
	} {
		assert.Equal(t, tc.want, PolicyText(tc.policy), tc.policy)
	}
}
