package guestinit

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBootLogEchoesWhatTheKernelWouldNotShow(t *testing.T) {
	cases := []struct {
		name         string
		consoleLevel int
		level        int
		wantConsole  bool
	}{
		{"default console level: the kernel shows notices", 7, levelNotice, false},
		{"quiet: the kernel hides notices", 4, levelNotice, true},
		{"quiet: the kernel shows errors", 4, levelErr, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var kmsg, console bytes.Buffer
			l := &bootLog{kmsg: &kmsg, console: &console, consoleLevel: tc.consoleLevel}
			l.printf(tc.level, "up in %d s", 2)
			assert.Equal(t, fmt.Sprintf("<%d>qoslab-agent: up in 2 s\n", tc.level), kmsg.String())
			if tc.wantConsole {
				assert.Equal(t, "qoslab-agent: up in 2 s\n", console.String())
			} else {
				assert.Empty(t, console.String())
			}
		})
	}
}

func TestBootLogWritesOneKernelRecordPerLine(t *testing.T) {
	var kmsg bytes.Buffer
	l := &bootLog{kmsg: &kmsg, consoleLevel: 7}
	l.errorf("first\nsecond\n")
	assert.Equal(t, "<3>qoslab-agent: first\n<3>qoslab-agent: second\n", kmsg.String())
}

type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("gone") }

func TestBootLogFallsBackToTheConsole(t *testing.T) {
	var console bytes.Buffer
	l := &bootLog{kmsg: brokenWriter{}, console: &console, consoleLevel: 7}
	l.notef("one")
	l.notef("two")
	assert.Equal(t, "qoslab-agent: one\nqoslab-agent: two\n", console.String())

	var noKmsg bytes.Buffer
	(&bootLog{console: &noKmsg, consoleLevel: 7}).notef("no kernel log")
	assert.Equal(t, "qoslab-agent: no kernel log\n", noKmsg.String())
}

func TestParseConsoleLevel(t *testing.T) {
	assert.Equal(t, 7, parseConsoleLevel("7\t4\t1\t7\n", 0))
	assert.Equal(t, 4, parseConsoleLevel("4\t4\t1\t7\n", 0))
	assert.Equal(t, 9, parseConsoleLevel("", 9))
}
