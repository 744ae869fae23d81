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

// Before the console exists (vz's virtio console is a module), the lines
// the kernel would not show are held, and written once it is attached.
func TestBootLogHoldsLinesUntilTheConsoleIsAttached(t *testing.T) {
	var kmsg, console bytes.Buffer
	l := &bootLog{kmsg: &kmsg, consoleLevel: 4}
	l.notef("mounted")
	l.errorf("shown by the kernel")
	l.notef("modules loaded")
	assert.Contains(t, kmsg.String(), "<5>qoslab-agent: mounted\n", "the kernel log has every line at once")
	l.attach(&console)
	assert.Equal(t, "qoslab-agent: mounted\nqoslab-agent: modules loaded\n", console.String(),
		"the held lines, in order; the error is the kernel's to show, from its log, when the console registers")
	l.notef("serving")
	assert.Equal(t, "qoslab-agent: mounted\nqoslab-agent: modules loaded\nqoslab-agent: serving\n", console.String())
}

func TestBootLogHoldsABoundedNumberOfLines(t *testing.T) {
	l := &bootLog{consoleLevel: 0}
	for i := 0; i < maxHeldLines+10; i++ {
		l.notef("line %d", i)
	}
	var console bytes.Buffer
	l.attach(&console)
	assert.Equal(t, maxHeldLines, bytes.Count(console.Bytes(), []byte("\n")))
	assert.Contains(t, console.String(), "qoslab-agent: line 0\n", "the first lines are kept: they say how the boot began")
}
