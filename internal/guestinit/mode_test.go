package guestinit

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestApplies(t *testing.T) {
	cases := []struct {
		name         string
		pid          int
		args         []string
		configExists bool
		want         bool
	}{
		{"the kernel's /init", 1, nil, false, true},
		{"PID 1 with stray kernel arguments in a qoslab image", 1, []string{"single"}, true, true},
		{"PID 1 of a container, with flags", 1, []string{"--listen", "tcp::7000"}, false, false},
		{"the agent process init starts", 57, []string{agentArg, "{}"}, true, true},
		{"a plain agent", 4242, []string{"--listen", "stdio"}, true, false},
		{"a plain agent without arguments", 4242, nil, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := applies(tc.pid, tc.args, func() bool { return tc.configExists })
			assert.Equal(t, tc.want, got)
		})
	}
}
